// Arrow functions and higher-order array methods.
const nums = [1, 2, 3, 4, 5, 6];
const doubled = nums.map((n) => n * 2);
const evens = nums.filter((n) => {
  const isEven = n % 2 === 0;
  return isEven;
});
const total = nums.reduce((acc, n) => acc + n, 0);
const compose = (f, g) => (x) => f(g(x));
const inc = (x) => x + 1;
const sq = (x) => x * x;
const incThenSquare = compose(sq, inc);
const r = incThenSquare(4);
console.log(doubled.length, evens.length, total, r);
