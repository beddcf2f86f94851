// doppel-engines worker for JavaScriptCore's `jsc` shell (appended to
// shell-common.js): a fresh realm per script from $262.createRealm(); promise
// jobs drained with drainMicrotasks(). The driver enforces timeouts (jsc's
// --watchdog counts the whole worker, notes §5.5).
doppel.serve("unknown", function (src, print) {
  var realm = $262.createRealm();
  realm.global.print = print;
  // JSC's realms alias `$262` as `$` (as engine262 does): removed so that an
  // undeclared `$` is a ReferenceError as in every other host.
  delete realm.global.$;
  try {
    realm.evalScript(src);
  } finally {
    drainMicrotasks();
  }
});
