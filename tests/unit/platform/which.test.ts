/**
 * Command lookup on PATH (src/platform/which.ts) searches absolute entries only: a relative one
 * (`.`, `node_modules/.bin`) would find a program by the project hermit runs in, where a confined
 * entry may have put one. The not-found message names the entries it left out. The system programs
 * hermit asks about processes (`ps`, `tasklist`, `taskkill`) are run by their path.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { commandNotFound } from "../../../src/mcp/upstream_transport.ts";
import { pathDirs, relativePathDirs, which } from "../../../src/platform/which.ts";
import { systemProgram } from "../../../src/platform/proc.ts";

describe("which: relative PATH entries", () => {
  const files = new Set([
    "node_modules/.bin/npx",
    "./npx",
    "/usr/bin/npx",
    "/usr/bin/only-abs",
    "bin/planted",
  ]);
  const isExecutable = (f: string) => files.has(f);

  it("are not searched, however early they come (POSIX)", () => {
    const opts = { platform: "linux" as const, cwd: "/project", isExecutable };
    assert.equal(which("npx", { ...opts, path: "node_modules/.bin:.:/usr/bin" }), "/usr/bin/npx");
    assert.equal(which("planted", { ...opts, path: "bin:/usr/bin" }), undefined);
    assert.equal(which("only-abs", { ...opts, path: "bin::/usr/bin" }), "/usr/bin/only-abs");
  });

  it("are not searched on Windows either", () => {
    const win = new Set(["tools\\x.exe", "C:\\bin\\y.exe"]);
    const opts = { platform: "win32" as const, pathext: ".EXE", isExecutable: (f: string) => win.has(f) };
    assert.equal(which("x", { ...opts, path: "tools;C:\\bin" }), undefined);
    assert.equal(which("y", { ...opts, path: 'tools;"C:\\bin"' }), "C:\\bin\\y.exe");
  });

  it("the entries, split", () => {
    assert.deepEqual(pathDirs("node_modules/.bin:/usr/bin::.:/bin", false), ["/usr/bin", "/bin"]);
    assert.deepEqual(relativePathDirs("node_modules/.bin:/usr/bin::.:/bin", false), [
      "node_modules/.bin",
      ".",
    ]);
    assert.deepEqual(relativePathDirs('"C:\\a b";tools', true), ["tools"]);
  });

  it("a command not found says which entries were not searched", () => {
    assert.equal(
      commandNotFound("srv", "node_modules/.bin:/usr/bin", "/ad", "linux"),
      "command not found: 'srv' (looked in PATH: /usr/bin; relative entries are not searched " +
        "(node_modules/.bin): name the command by its path)",
    );
    assert.equal(
      commandNotFound("srv", "/usr/bin:/bin", "/ad", "linux"),
      "command not found: 'srv' (looked in PATH: /usr/bin:/bin)",
    );
  });
});

describe("system programs", () => {
  it("are run by their path, never looked up (Windows looks in the working directory first)", () => {
    assert.equal(systemProgram("ps", "darwin", {}), "/bin/ps");
    assert.equal(
      systemProgram("tasklist", "win32", { SystemRoot: "D:\\Win" }),
      "D:\\Win\\System32\\tasklist.exe",
    );
    assert.equal(systemProgram("taskkill", "win32", {}), "C:\\Windows\\System32\\taskkill.exe");
    assert.equal(
      systemProgram("powershell", "win32", {}),
      "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe",
    );
  });
});
