// Closures capturing variables of enclosing scopes.
function makeCounter(start) {
  let count = start;
  return function increment(step) {
    count += step;
    return count;
  };
}

function makeAdders() {
  const adders = [];
  for (let i = 0; i < 3; i++) {
    adders.push((x) => x + i);
  }
  return adders;
}

const counter = makeCounter(10);
counter(1);
counter(2);
const value = counter(3);
const adders = makeAdders();
let results = 0;
for (const add of adders) {
  results += add(100);
}
console.log(value, results);
