// Runs record.py inside pyodide (CPython compiled to WebAssembly) under Node.
//
//   node specs/traces/pyodide-run.mjs <pyodide package folder> <CPython version> [record.py arguments]
//
// check-pyodide installs the package folder and calls this; run that instead. This folder
// (specs/traces) is mounted at /drain/specs/traces in pyodide's file system, so record.py
// finds the corpora next to itself as usual. The CPython version, as platform.python_version()
// prints it (3.14.2, 3.15.0rc1), must be the one pyodide bundles: anything else fails, so the
// versions that the READMEs claim are the versions that ran. The exit code is record.py's.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [packageDir, expectedVersion, ...args] = process.argv.slice(2);
if (!packageDir || !expectedVersion) {
  console.error("usage: node pyodide-run.mjs <pyodide package folder> <CPython version> [record.py arguments]");
  process.exit(2);
}
// A reader that stops early (| head) ends the output, not with a stack trace.
process.stdout.on("error", (error) => process.exit(error.code === "EPIPE" ? 0 : 1));
const tracesDir = path.dirname(fileURLToPath(import.meta.url));
const { loadPyodide } = await import(pathToFileURL(path.join(packageDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({
  indexURL: packageDir + path.sep,
  stdout: (line) => process.stdout.write(line + "\n"),
  stderr: (line) => process.stderr.write(line + "\n"),
});

const mountPoint = "/drain/specs/traces";
pyodide.FS.mkdirTree(mountPoint);
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: tracesDir }, mountPoint);
pyodide.globals.set("EXPECTED_VERSION", expectedVersion);
pyodide.globals.set("ARGS_JSON", JSON.stringify(args));
// Pyodide makes its own loop (a WebLoop, which hands callbacks to JavaScript) the running loop at
// start-up, and asyncio.run refuses to start a loop inside a running one. Nothing here runs on
// the WebLoop: unset it, so that record.py's asyncio.run starts its own loop (--loop plain).
let code;
try {
  code = pyodide.runPython(`
import asyncio, json, platform, runpy, sys

def run_record_py():
    asyncio.events._set_running_loop(None)
    if platform.python_version() != EXPECTED_VERSION:
        sys.stderr.write("pyodide-run: this pyodide bundles CPython %s, not %s\\n"
                         % (platform.python_version(), EXPECTED_VERSION))
        return 2
    sys.argv = ["${mountPoint}/record.py"] + json.loads(ARGS_JSON)
    try:
        runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else 0 if exit.code is None else 1
    return 0

run_record_py()
`);
} catch (error) {
  // A Python exception that record.py let through: its traceback is the message (Node would
  // print a line of pyodide's minified source instead).
  process.stderr.write(String(error.message ?? error) + "\n");
  code = 1;
}
process.exitCode = code;
