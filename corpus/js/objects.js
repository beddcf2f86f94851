// Object literals, nested objects, property updates.
function makePoint(x, y) {
  return { x: x, y: y };
}

function move(p, dx, dy) {
  p.x += dx;
  p.y += dy;
  return p;
}

const origin = makePoint(0, 0);
const box = {
  topLeft: makePoint(1, 2),
  bottomRight: makePoint(5, 7),
  label: "box",
};
move(box.topLeft, 1, 1);
const width = box.bottomRight.x - box.topLeft.x;
const keys = Object.keys(box);
delete box.label;
console.log(origin.x, width, keys.length);
