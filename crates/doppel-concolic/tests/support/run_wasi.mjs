// Reference runtime for doppel-concolic's differential tests: node's WASI
// preview1. Usage: node --no-warnings run_wasi.mjs MODULE.wasm [args...]
// (stdin is the process's stdin, the preopened directory "." is the working
// directory). Exit code: the program's; a trap prints "TRAP <message>" on
// stderr and exits with 134.
import { readFileSync } from 'node:fs';
import { WASI } from 'node:wasi';

const [wasmPath, ...args] = process.argv.slice(2);
const wasi = new WASI({
  version: 'preview1',
  args: ['prog', ...args],
  env: {},
  preopens: { '.': '.' },
  returnOnExit: true,
});
const module = await WebAssembly.compile(readFileSync(wasmPath));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
try {
  process.exitCode = wasi.start(instance);
} catch (e) {
  process.stderr.write(`TRAP ${e && e.message}\n`);
  process.exitCode = 134;
}
