// Generators and iteration protocols.
function* range(start, end) {
  for (let i = start; i < end; i++) {
    yield i;
  }
}

function* take(iter, n) {
  let k = 0;
  for (const v of iter) {
    if (k++ >= n) return;
    yield v;
  }
}

const collected = [];
for (const v of take(range(5, 100), 4)) {
  collected.push(v * v);
}
const it = range(0, 2);
const first = it.next();
const second = it.next();
const done = it.next();
console.log(collected, first.value, second.value, done.done);
