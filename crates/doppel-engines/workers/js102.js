// doppel-engines worker for SpiderMonkey's `js102` shell (appended to
// shell-common.js): a fresh global per script from newGlobal(), the source
// evaluated there as a Script, promise jobs drained with drainJobQueue().
doppel.serve(typeof version === "function" ? String(version()) : "unknown", function (src, print) {
  var g = newGlobal();
  g.print = print;
  try {
    evaluate(src, { global: g });
  } finally {
    drainJobQueue();
  }
});
