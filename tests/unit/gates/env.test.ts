/**
 * Gate 2, the child environment: the allowlist (pinned literally), XDG_*, the Windows essentials
 * case-insensitively on win32 only, declared keys on top, exported shell functions dropped, and
 * nothing else from hermit's own environment.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BASELINE_KEYS, childEnv, inheritable, TLS_KEYS, WINDOWS_KEYS } from "../../../src/gates/env.ts";

const SECRETS = {
  AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  OPENAI_API_KEY: "sk-test-123",
  GITHUB_TOKEN: "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
  SSH_AUTH_SOCK: "/tmp/ssh-agent.sock",
  NODE_OPTIONS: "--require /tmp/evil.js",
  LD_PRELOAD: "/tmp/evil.so",
  HERMIT_SAFE_MODE: "0",
  npm_config_registry: "https://evil.example",
};

describe("env: pins", () => {
  it("BASELINE_KEYS is Hermes's _SAFE_ENV_KEYS", () => {
    assert.deepEqual([...BASELINE_KEYS], [
      "PATH",
      "HOME",
      "USER",
      "LANG",
      "LC_ALL",
      "TERM",
      "SHELL",
      "TMPDIR",
    ]);
  });
  it("TLS_KEYS are the CA-bundle paths (hermit's deliberate addition)", () => {
    assert.deepEqual([...TLS_KEYS], ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR"]);
  });
  it("WINDOWS_KEYS is Hermes's Windows set", () => {
    assert.deepEqual([...WINDOWS_KEYS], [
      "ALLUSERSPROFILE",
      "APPDATA",
      "COMMONPROGRAMFILES",
      "COMMONPROGRAMFILES(X86)",
      "COMMONPROGRAMW6432",
      "COMPUTERNAME",
      "COMSPEC",
      "HOMEDRIVE",
      "HOMEPATH",
      "LOCALAPPDATA",
      "NUMBER_OF_PROCESSORS",
      "OS",
      "PATHEXT",
      "PROCESSOR_ARCHITECTURE",
      "PROGRAMDATA",
      "PROGRAMFILES",
      "PROGRAMFILES(X86)",
      "PROGRAMW6432",
      "PUBLIC",
      "SYSTEMDRIVE",
      "SYSTEMROOT",
      "TEMP",
      "TMP",
      "USERDOMAIN",
      "USERNAME",
      "USERPROFILE",
      "WINDIR",
    ]);
  });
});

describe("childEnv on POSIX", () => {
  const parent = {
    PATH: "/usr/bin:/bin",
    HOME: "/home/u",
    USER: "u",
    LANG: "C.UTF-8",
    LC_ALL: "C",
    TERM: "xterm",
    SHELL: "/bin/bash",
    TMPDIR: "/tmp",
    NODE_EXTRA_CA_CERTS: "/etc/ca.pem",
    SSL_CERT_FILE: "/etc/ssl/cert.pem",
    SSL_CERT_DIR: "/etc/ssl/certs",
    XDG_CONFIG_HOME: "/home/u/.config",
    XDG_RUNTIME_DIR: "/run/user/1000",
    APPDATA: "C:\\Users\\u\\AppData\\Roaming",
    SystemRoot: "C:\\Windows",
    Path: "C:\\Windows",
    xdg_lower: "no",
    ...SECRETS,
  };

  it("passes exactly the baseline, the TLS paths and XDG_*, nothing else", () => {
    assert.deepEqual(childEnv(parent, {}, "linux"), {
      PATH: "/usr/bin:/bin",
      HOME: "/home/u",
      USER: "u",
      LANG: "C.UTF-8",
      LC_ALL: "C",
      TERM: "xterm",
      SHELL: "/bin/bash",
      TMPDIR: "/tmp",
      NODE_EXTRA_CA_CERTS: "/etc/ca.pem",
      SSL_CERT_FILE: "/etc/ssl/cert.pem",
      SSL_CERT_DIR: "/etc/ssl/certs",
      XDG_CONFIG_HOME: "/home/u/.config",
      XDG_RUNTIME_DIR: "/run/user/1000",
    });
    assert.deepEqual(childEnv(parent, {}, "darwin"), childEnv(parent, {}, "linux"));
  });

  it("is case-sensitive off Windows: path, Path and the Windows set are dropped", () => {
    for (const key of ["Path", "path", "APPDATA", "SystemRoot", "xdg_lower", "Xdg_config_home"]) {
      assert.equal(inheritable(key, "linux"), false, key);
    }
  });

  it("adds what the entry declares, over inherited values, including secrets it names itself", () => {
    const env = childEnv(
      parent,
      { PATH: "/opt/bin", TOKEN: "declared-secret", OPENAI_API_KEY: "mine" },
      "linux",
    );
    assert.equal(env.PATH, "/opt/bin");
    assert.equal(env.TOKEN, "declared-secret");
    assert.equal(env.OPENAI_API_KEY, "mine");
    assert.equal(env.AWS_SECRET_ACCESS_KEY, undefined);
  });

  it("keeps only the absolute entries of an inherited PATH (a declared one is the entry's own)", () => {
    const env = childEnv({ PATH: "node_modules/.bin:/usr/bin:.::/bin:bin" }, {}, "linux");
    assert.equal(env.PATH, "/usr/bin:/bin");
    assert.equal(childEnv({ PATH: "/usr/bin" }, { PATH: "tools:/usr/bin" }, "linux").PATH, "tools:/usr/bin");
    assert.equal(childEnv({ Path: 'C:\\bin;tools;"C:\\x y"' }, {}, "win32").Path, 'C:\\bin;"C:\\x y"');
  });

  it("drops exported shell functions and unset values", () => {
    const env = childEnv({ HOME: "() {  :; }; echo pwned", TERM: undefined, USER: "u" }, {}, "linux");
    assert.deepEqual(env, { USER: "u" });
  });

  it("never passes a secret, whatever its name looks like", () => {
    const env = childEnv({ ...SECRETS, PATH: "/bin" }, {}, "linux");
    assert.deepEqual(Object.keys(env), ["PATH"]);
  });
});

describe("childEnv on Windows", () => {
  const parent = {
    Path: "C:\\Windows;C:\\node",
    SystemRoot: "C:\\Windows",
    windir: "C:\\Windows",
    ComSpec: "C:\\Windows\\system32\\cmd.exe",
    PATHEXT: ".COM;.EXE;.BAT",
    USERPROFILE: "C:\\Users\\u",
    LocalAppData: "C:\\Users\\u\\AppData\\Local",
    "ProgramFiles(x86)": "C:\\Program Files (x86)",
    TEMP: "C:\\Temp",
    xdg_data_home: "C:\\xdg",
    ...SECRETS,
  };

  it("matches the Windows set and the baseline case-insensitively", () => {
    assert.deepEqual(childEnv(parent, {}, "win32"), {
      Path: "C:\\Windows;C:\\node",
      SystemRoot: "C:\\Windows",
      windir: "C:\\Windows",
      ComSpec: "C:\\Windows\\system32\\cmd.exe",
      PATHEXT: ".COM;.EXE;.BAT",
      USERPROFILE: "C:\\Users\\u",
      LocalAppData: "C:\\Users\\u\\AppData\\Local",
      "ProgramFiles(x86)": "C:\\Program Files (x86)",
      TEMP: "C:\\Temp",
      xdg_data_home: "C:\\xdg",
    });
  });

  it("a declared key replaces an inherited one spelled differently (one variable on Windows)", () => {
    const env = childEnv(parent, { PATH: "C:\\tools" }, "win32");
    assert.equal(env.PATH, "C:\\tools");
    assert.equal(env.Path, undefined);
    assert.equal(Object.keys(env).filter((k) => k.toUpperCase() === "PATH").length, 1);
  });
});
