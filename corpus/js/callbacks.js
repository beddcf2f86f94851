// Callbacks and functions stored in data structures.
const ops = {
  add: function (a, b) { return a + b; },
  sub(a, b) { return a - b; },
  mul: (a, b) => a * b,
};

function apply(name, a, b) {
  const fn = ops[name];
  return fn(a, b);
}

function each(xs, cb) {
  for (let i = 0; i < xs.length; i++) {
    cb(xs[i], i);
  }
}

let acc = 0;
each(["add", "sub", "mul"], (name, i) => {
  acc += apply(name, 6, i + 1);
});
console.log(acc);
