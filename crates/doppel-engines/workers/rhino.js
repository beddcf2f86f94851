// doppel-engines worker for Rhino's shell (`rhino -version 200`, appended to
// shell-common.js): a fresh global per script from Context.initStandardObjects(),
// the source evaluated there as a Script, promise jobs run with
// Context.processMicrotasks(). The driver enforces timeouts.
//
// The script runs in Rhino's interpreter (optimization level -1), not as a
// JVM class compiled per script: compiling a class per small script costs more
// than running it, and only the interpreter bounds JS recursion
// (setMaximumInterpreterStackDepth: InternalError "Exceeded maximum stack
// depth"), where compiled code overflows the JVM's stack and kills the worker.
//
// A compile error reaches the host as an EvaluatorException ("Compilation
// produced 1 syntax errors"); its text goes to the error reporter, so this
// worker installs one that keeps the first error: "TypeError: redeclaration of
// variable a." is a TypeError, any other compile error a SyntaxError.
// The shell's readline() needs an interactive console; requests are read from
// stdin directly (ASCII lines, src/wire.rs).
var readline = (function () {
  var input = new java.io.BufferedReader(new java.io.InputStreamReader(java.lang.System["in"], "UTF-8"));
  return function () {
    var line = input.readLine();
    return line === null ? null : String(line);
  };
})();
var doppelRhino = (function () {
  var Context = Packages.org.mozilla.javascript.Context;
  var EvaluatorException = Packages.org.mozilla.javascript.EvaluatorException;
  var cx = Context.getCurrentContext();
  cx.setOptimizationLevel(-1);
  cx.setMaximumInterpreterStackDepth(10000);
  var compileError = null;
  cx.setErrorReporter(new Packages.org.mozilla.javascript.ErrorReporter({
    warning: function () {},
    error: function (message) {
      if (compileError === null) compileError = String(message);
    },
    runtimeError: function (message, sourceName, line, lineSource, lineOffset) {
      return new EvaluatorException(message, sourceName, line, lineSource, lineOffset);
    }
  }));
  var run = function (src, print) {
    var scope = cx.initStandardObjects();
    scope.print = print;
    compileError = null;
    try {
      cx.evaluateString(scope, src, "test.js", 1, null);
    } catch (e) {
      if (compileError !== null) {
        var m = /^([A-Za-z]*Error): ([\s\S]*)$/.exec(compileError);
        var err = m ? new (m[1] === "TypeError" ? TypeError : SyntaxError)(m[2]) : new SyntaxError(compileError);
        throw err;
      }
      throw e;
    }
    cx.processMicrotasks();
  };
  return { run: run };
})();
doppel.serve("unknown", doppelRhino.run);
