// switch with fall-through, default and labelled loops.
function classify(n) {
  let kind;
  switch (n % 4) {
    case 0:
      kind = "zero";
      break;
    case 1:
    case 2:
      kind = "small";
      break;
    default:
      kind = "other";
  }
  return kind;
}

function findPair(xs, target) {
  let found = null;
  outer: for (let i = 0; i < xs.length; i++) {
    for (let j = i + 1; j < xs.length; j++) {
      if (xs[i] + xs[j] === target) {
        found = [i, j];
        break outer;
      }
    }
  }
  return found;
}

const kinds = [0, 1, 2, 3, 4].map(classify);
const pair = findPair([2, 7, 11, 15], 18);
console.log(kinds.join(","), pair);
