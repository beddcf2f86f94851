// try / catch / finally and thrown errors crossing frames.
function parsePositive(s) {
  const n = Number(s);
  if (Number.isNaN(n) || n <= 0) {
    throw new RangeError("not positive: " + s);
  }
  return n;
}

function safeParse(s) {
  let result = -1;
  try {
    result = parsePositive(s);
  } catch (e) {
    result = 0;
  } finally {
    result += 100;
  }
  return result;
}

const good = safeParse("42");
const bad = safeParse("-3");
const worse = safeParse("x");
console.log(good, bad, worse);
