function* range(start, end) {
  for (let i = start; i < end; i++) {
    yield i;
  }
}
for (const v of range(0, 10)) {
  if (v >= 1) break;
}
const b = range(20, 22);
console.log(b.next().value, b.next().value);
