// var hoisting, function declarations used before their definition, TDZ-free lets.
var before = hoisted(2);

function hoisted(x) {
  var y = x * 10;
  if (x > 1) {
    var inner = y + 1;
  }
  return inner;
}

function shadow() {
  let v = 1;
  {
    let v = 2;
    v += 1;
  }
  return v;
}

var after = shadow();
console.log(before, after);
