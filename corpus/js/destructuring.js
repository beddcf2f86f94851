// Destructuring, default parameters, rest and spread.
function area({ w, h = 1 }) {
  return w * h;
}

function first([head, ...tail]) {
  return head + tail.length;
}

function sum(...xs) {
  let s = 0;
  for (const x of xs) s += x;
  return s;
}

const a = area({ w: 4 });
const b = area({ w: 2, h: 3 });
const c = first([7, 8, 9]);
const parts = [1, 2, 3];
const d = sum(...parts, 4);
const { x, y: renamed = 5 } = { x: 1 };
const [p, , q] = [10, 20, 30];
console.log(a, b, c, d, x, renamed, p, q);
