// Runs harness.js, then test.js, as classic scripts in one global (as doppel's node backend and test262 runners do).
const fs = require('fs'), path = require('path'), vm = require('vm');
for (const f of ['harness.js', 'test.js']) {
  const file = path.join(__dirname, f);
  vm.runInThisContext(fs.readFileSync(file, 'utf8'), { filename: file });
}
