// Loops of every kind over small arrays.
function sumFor(xs) {
  let total = 0;
  for (let i = 0; i < xs.length; i++) {
    total += xs[i];
  }
  return total;
}

function sumWhile(xs) {
  let total = 0;
  let i = 0;
  while (i < xs.length) {
    total += xs[i];
    i++;
  }
  return total;
}

function sumDoWhile(xs) {
  let total = 0;
  let i = 0;
  do {
    total += xs[i];
    i += 1;
  } while (i < xs.length);
  return total;
}

function sumOf(xs) {
  let total = 0;
  for (const x of xs) total += x;
  return total;
}

const data = [3, 1, 4, 1, 5, 9, 2, 6];
const a = sumFor(data);
const b = sumWhile(data);
const c = sumDoWhile(data);
const d = sumOf(data);
console.log(a, b, c, d);
