function run() {
  var other = 2;
  var shade = function (tri, pos) {
    return tri + pos;
  };
  return shade(1, 2);
}
run();
