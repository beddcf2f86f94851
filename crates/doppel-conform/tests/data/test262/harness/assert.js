// doppel's stand-in for test262's assert.js (written for doppel's tests),
// with the harness's message wording, which doppel reads the failed
// assertion's kind from.
function assert(value, message) {
  if (value === true) return;
  throw new Test262Error(message === undefined ? "Expected true but got " + String(value) : message);
}
assert._same = function (a, b) {
  return a === b ? a !== 0 || 1 / a === 1 / b : a !== a && b !== b;
};
assert.sameValue = function (actual, expected, message) {
  if (assert._same(actual, expected)) return;
  var prefix = message === undefined ? "" : message + " ";
  throw new Test262Error(prefix + "Expected SameValue(\u00ab" + String(actual) + "\u00bb, \u00ab" + String(expected) + "\u00bb) to be true");
};
assert.throws = function (C, f, message) {
  var prefix = message === undefined ? "" : message + " ";
  try {
    f();
  } catch (e) {
    if (e === null || typeof e !== "object" || e.constructor !== C) {
      throw new Test262Error(prefix + "Expected a " + C.name + " but got a " + (e && e.constructor ? e.constructor.name : typeof e));
    }
    return;
  }
  throw new Test262Error(prefix + "Expected a " + C.name + " to be thrown but no exception was thrown at all");
};
