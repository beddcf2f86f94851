// Globals updated from functions; the arguments object; default this.
var counter = 0;
let config = { step: 2, limit: 7 };

function bump() {
  counter += config.step;
  return counter;
}

function countArgs() {
  let n = 0;
  for (let i = 0; i < arguments.length; i++) {
    n += arguments[i];
  }
  return n;
}

while (bump() < config.limit) {
  config.step += 1;
}
const argsTotal = countArgs(1, 2, 3);
console.log(counter, argsTotal);
