/**
 * Loading `hermit.yaml`: the DESIGN.md example loads with the documented defaults, and every kind
 * of broken manifest is refused with one `file:line:col: message` line per problem that names the
 * field and says what to do (exit 2, never a stack trace).
 */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { after, describe, it } from "node:test";
import { HermitError } from "../../../src/errors.ts";
import {
  displayPath,
  loadManifest,
  loadManifestWithSource,
  ManifestError,
  parseManifest,
} from "../../../src/manifest/load.ts";
import { libraryLine } from "../../../src/manifest/yaml_errors.ts";
import { fixtures } from "../../helpers/hermit.ts";
import { tempDir } from "../../helpers/tmp.ts";

const designExample = path.join(fixtures, "manifests", "design-example");
// A file under the working directory is shown relative to it: messages start "hermit.yaml:".
const FILE = path.join(process.cwd(), "hermit.yaml");
const SHOWN = displayPath(FILE);

function refused(text: string): ManifestError {
  try {
    parseManifest(text, FILE, path.dirname(FILE));
  } catch (err) {
    assert.ok(err instanceof ManifestError, `expected a ManifestError, got ${err}`);
    return err;
  }
  assert.fail(`accepted:\n${text}`);
}

function accepted(text: string) {
  return parseManifest(text, FILE, path.dirname(FILE)).manifest;
}

describe("the DESIGN.md section 1 example", () => {
  const m = loadManifest(designExample);

  it("loads with its own values", () => {
    assert.equal(m.name, "notes");
    assert.equal(m.version, "0.3.0");
    assert.equal(m.description, "Shared notes for a team of agents");
    assert.deepEqual(m.exports, {
      tools: ["add_note", "search_notes", "read_file"],
      context: "CONTEXT.md",
      skills: "skills/",
      roles: "roles/",
    });
    assert.equal(m.file, path.join(designExample, "hermit.yaml"));
    assert.equal(m.dir, designExample);
  });

  it("normalizes the command tool", () => {
    const t = m.tools.add_note;
    assert.equal(t.name, "add_note");
    assert.equal(t.description, "Append a note");
    assert.deepEqual(t.run, ["python3", "tools/add_note.py"]);
    assert.equal(t.readOnly, false);
    assert.equal(t.timeoutSeconds, 30);
    assert.deepEqual(t.inputSchema, {
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
    });
    assert.deepEqual(t.env, {});
  });

  it("fills Hermes's defaults into the upstreams", () => {
    const fs = m.upstreams.fs;
    assert.equal(fs.kind, "stdio");
    assert.equal(fs.command, "npx");
    assert.deepEqual(fs.args, ["-y", "@modelcontextprotocol/server-filesystem", "${workspaceFolder}"]);
    assert.deepEqual(fs.env, { TOKEN: "${env:FS_TOKEN}" }, "interpolation waits until spawn");
    assert.deepEqual(fs.include, ["read_file"]);
    assert.deepEqual(fs.exclude, []);
    assert.equal(fs.trust, "untrusted");
    assert.equal(fs.lazy, true);
    assert.equal(fs.idleTimeoutSeconds, 600);

    const search = m.upstreams.search;
    assert.equal(search.kind, "http");
    assert.equal(search.url, "https://example.com/mcp");
    assert.equal(search.auth, "oauth");
    assert.equal(search.trust, "full", "trust defaults to full");
    assert.equal(search.include, undefined, "no include list: everything not excluded");
    assert.equal(search.lazy, false);
    assert.equal(search.enabled, true);
    assert.equal(search.callTimeoutSeconds, 300);
    assert.equal(search.connectTimeoutSeconds, 60);
    assert.equal(search.keepaliveSeconds, 180);
    assert.equal(search.idleTimeoutSeconds, 0);
    assert.equal(search.maxLifetimeSeconds, 0);
    assert.deepEqual(search.sampling, {
      enabled: true,
      maxRpm: 10,
      timeoutSeconds: 30,
      maxTokensCap: 4096,
      maxToolRounds: 5,
      model: undefined,
      allowedModels: [],
    });
    assert.deepEqual(search.elicitation, { enabled: true, timeoutSeconds: 300 });
    assert.equal(search.resources, true);
    assert.equal(search.prompts, true);
    assert.equal(search.prefix, "");
    assert.deepEqual(search.rename, {});
  });

  it("keeps the serve section, warning about the standalone-only keys a session adapter ignores", () => {
    assert.equal(m.serve.transport, "stdio");
    assert.equal(m.serve.lifecycle, "session");
    assert.equal(m.serve.command, "hermit serve .");
    assert.equal(m.serve.health, "tools/list");
    assert.equal(m.serve.hostLaunch, true);
    assert.deepEqual(
      m.warnings.map((w) => [w.path, w.line, w.col]),
      [["serve.host_launch", 35, 16], ["serve.instructions", 36, 17]],
    );
    for (const w of m.warnings) assert.match(w.message, /applies to standalone adapters only; ignored/);
  });
});

describe("defaults", () => {
  it("a manifest with only a name gets the documented serve defaults", () => {
    const m = accepted("name: a\n");
    assert.deepEqual(m.exports, { tools: [], context: undefined, skills: undefined, roles: undefined });
    assert.deepEqual(m.tools, {});
    assert.deepEqual(m.upstreams, {});
    assert.deepEqual(m.serve, {
      transport: "stdio",
      command: "hermit serve .",
      health: "tools/list",
      lifecycle: "session",
      hostLaunch: true,
      instructions: undefined,
      idleShutdownSeconds: 300,
      port: undefined,
      drainSeconds: 20,
      streamSeconds: 0,
      maxSessions: 256,
      maxConnections: 512,
      maxToolProcesses: 32,
    });
    assert.deepEqual(m.warnings, []);
  });

  it("lifecycle follows transport and transport follows lifecycle", () => {
    const http = accepted("name: a\nserve:\n  transport: http\n  instructions: SERVICE.md\n").serve;
    assert.equal(http.lifecycle, "standalone");
    assert.equal(http.instructions, "SERVICE.md");
    const standalone = accepted("name: a\nserve:\n  lifecycle: standalone\n").serve;
    assert.equal(standalone.transport, "http");
    assert.equal(standalone.hostLaunch, true);
  });

  it("a command tool gets a 60 s timeout, an empty object schema and readOnly false", () => {
    const t = accepted("name: a\ntools:\n  x:\n    run: [./x]\n").tools.x;
    assert.equal(t.timeoutSeconds, 60);
    assert.deepEqual(t.inputSchema, { type: "object", properties: {} });
    assert.equal(t.readOnly, false);
    assert.equal(t.description, "");
  });

  it("keepalive below 5 s is raised to the floor with a warning; an unknown trust fails closed", () => {
    const m = accepted(
      "name: a\nmcp_servers:\n  s:\n    command: x\n    keepalive_interval: 1\n    trust: partial\n",
    );
    assert.equal(m.upstreams.s.keepaliveSeconds, 5);
    assert.equal(m.upstreams.s.trust, "untrusted");
    assert.equal(m.upstreams.s.trustWritten, "partial");
    assert.deepEqual(m.warnings.map((w) => `${w.line}:${w.col} ${w.path}`), [
      "5:25 mcp_servers.s.keepalive_interval",
      "6:12 mcp_servers.s.trust",
    ]);
  });

  it("a single include string is a list of one; transport sse selects SSE", () => {
    const m = accepted(
      "name: a\nmcp_servers:\n  s:\n    url: https://h/sse\n    transport: sse\n    tools: { include: read_* }\n",
    );
    assert.equal(m.upstreams.s.kind, "sse");
    assert.deepEqual(m.upstreams.s.include, ["read_*"]);
  });
});

describe("sandbox blocks", () => {
  const m = accepted(
    [
      "name: a",
      "sandbox:",
      "  read: [shared]",
      "  deny_read: ['${userHome}/.npmrc']",
      "  write: [data/]",
      "  network: none",
      "tools:",
      "  plain: { run: [a] }",
      "  own: { run: [a], sandbox: { write: [out], network: all, require: true } }",
      "  loose: { run: [a], sandbox: off }",
      "mcp_servers:",
      "  s:",
      "    command: x",
      "    sandbox: { network: ['API.example.com:443', '[::1]:8080', '*.npmjs.org:443'] }",
      "  r: { url: 'https://h/mcp' }",
    ].join("\n") + "\n",
  );

  it("an entry without a block takes the adapter's", () => {
    assert.deepEqual(m.tools.plain.sandbox, {
      off: false,
      read: ["shared"],
      denyRead: ["${userHome}/.npmrc"],
      write: ["data/"],
      network: "none",
      require: false,
    });
  });

  it("an entry's block adds its paths to the adapter's lists and replaces network and require", () => {
    assert.deepEqual(m.tools.own.sandbox.write, ["data/", "out"]);
    assert.equal(m.tools.own.sandbox.network, "all");
    assert.equal(m.tools.own.sandbox.require, true);
    assert.deepEqual(m.upstreams.s.sandbox.network, [
      { host: "api.example.com", port: 443 },
      { host: "::1", port: 8080 },
      { host: "*.npmjs.org", port: 443 },
    ]);
    assert.deepEqual(m.upstreams.s.sandbox.read, ["shared"]);
  });

  it("off on an entry wins; a remote server carries no policy", () => {
    assert.equal(m.tools.loose.sandbox.off, true);
    assert.deepEqual(m.tools.loose.sandbox.write, []);
    assert.equal(m.upstreams.r.sandbox.off, false);
    assert.deepEqual(m.upstreams.r.sandbox.write, []);
  });

  it("off at the top applies to entries without a block; one with a block stays confined", () => {
    const t = accepted(
      "name: a\nsandbox: off\ntools:\n  x: { run: [a] }\n  y: { run: [a], sandbox: { write: [o] } }\n",
    );
    assert.equal(t.sandbox.off, true);
    assert.equal(t.tools.x.sandbox.off, true);
    assert.equal(t.tools.y.sandbox.off, false);
    assert.deepEqual(t.tools.y.sandbox.write, ["o"]);
  });

  it("no block at all: confined with the defaults (network decided by trust)", () => {
    const t = accepted("name: a\ntools:\n  x: { run: [a] }\n");
    assert.deepEqual(t.tools.x.sandbox, {
      off: false,
      read: [],
      denyRead: [],
      write: [],
      network: undefined,
      require: false,
    });
  });
});

/** [what, manifest, line, col, patterns the message must match]. */
const INVALID: [string, string, number, number, RegExp[]][] = [
  ["unknown top-level key", "name: a\nexprots: {}\n", 2, 1, [
    /^exprots: unknown key/,
    /did you mean 'exports'\?/,
  ]],
  [
    "unknown nested key",
    "name: a\ntools:\n  x:\n    run: [a]\n    readonly: true\n",
    5,
    5,
    [/^tools\.x\.readonly: unknown key/, /did you mean 'read_only'\?/],
  ],
  [
    "unknown key with nothing close",
    "name: a\nserve:\n  zzzzzz: 1\n",
    3,
    3,
    [/^serve\.zzzzzz: unknown key/, /known keys here: transport, command/],
  ],
  ["wrong type", "name: a\ntools:\n  x:\n    run: [a]\n    read_only: yes\n", 5, 16, [
    /^tools\.x\.read_only must be true or false/,
  ]],
  ["missing name", "version: '1'\n", 1, 1, [/^name is required/, /e\.g\. name: notes/]],
  ["bad name", "name: Notes\n", 1, 7, [
    /^name must be lowercase letters, digits and dashes/,
    /e\.g\. name: notes/,
  ]],
  ["name too long", `name: ${"a".repeat(65)}\n`, 1, 7, [/^name must be at most 64 characters/]],
  ["run not a list", "name: a\ntools:\n  x:\n    run: python3 x.py\n", 4, 10, [
    /^tools\.x\.run must be a list of strings/,
    /e\.g\. run: \[python3, tools\/add_note\.py\]/,
  ]],
  ["run empty", "name: a\ntools:\n  x:\n    run: []\n", 4, 10, [/^tools\.x\.run must name a program to run/]],
  ["run missing", "name: a\ntools:\n  x:\n    description: d\n", 4, 5, [/^tools\.x\.run is required/]],
  ["version as a number", "name: a\nversion: 1.0\n", 2, 10, [/^version must be a string; quote it/]],
  ["command and url both", "name: a\nmcp_servers:\n  s:\n    command: x\n    url: https://h\n", 3, 3, [
    /^mcp_servers\.s sets both command and url/,
    /keep command .* or url/,
  ]],
  ["neither command nor url", "name: a\nmcp_servers:\n  s:\n    args: [x]\n", 3, 3, [
    /^mcp_servers\.s needs command \(a local server\) or url \(a remote one\)/,
  ]],
  ["a server that is null", "name: a\nmcp_servers:\n  s:\n", 3, 5, [
    /^mcp_servers\.s must be a mapping of server fields/,
    /command: npx/,
  ]],
  ["bad url", "name: a\nmcp_servers:\n  s:\n    url: ftp://h/x\n", 4, 10, [
    /^mcp_servers\.s\.url must be an http:\/\/ or https:\/\/ URL/,
  ]],
  ["url without a host", "name: a\nmcp_servers:\n  s:\n    url: 'http:'\n", 4, 10, [
    /^mcp_servers\.s\.url must be/,
  ]],
  [
    "transport mismatch for a command",
    "name: a\nmcp_servers:\n  s:\n    command: x\n    transport: sse\n",
    5,
    16,
    [
      /^mcp_servers\.s\.transport must be stdio \(or absent\) for a command/,
    ],
  ],
  [
    "transport mismatch for a url",
    "name: a\nmcp_servers:\n  s:\n    url: https://h\n    transport: stdio\n",
    5,
    16,
    [
      /^mcp_servers\.s\.transport must be http or sse for a url/,
    ],
  ],
  ["unknown transport", "name: a\nmcp_servers:\n  s:\n    url: https://h\n    transport: ws\n", 5, 16, [
    /^mcp_servers\.s\.transport must be one of: stdio, http, sse/,
  ]],
  ["duplicate export", "name: a\nexports:\n  tools: [a, b, a]\n", 3, 17, [
    /^exports\.tools lists 'a' twice; remove the repeat/,
  ]],
  ["export not a tool name", "name: a\nexports:\n  tools: [ok, 'no spaces']\n", 3, 15, [
    /^exports\.tools\[1\] must be a tool name of letters, digits, _ or -/,
  ]],
  [
    "rename onto a command tool",
    "name: a\ntools:\n  x:\n    run: [a]\nmcp_servers:\n  s:\n    command: y\n    rename: { q: x }\n",
    8,
    18,
    [/^mcp_servers\.s\.rename\.q exports 'x', which tools\.x already provides; choose another name/],
  ],
  [
    "two renames onto one name",
    "name: a\nmcp_servers:\n  s:\n    command: y\n    rename:\n      a: z\n  t:\n    command: y\n    rename:\n      b: z\n",
    10,
    10,
    [/^mcp_servers\.t\.rename\.b exports 'z', which mcp_servers\.s\.rename\.a already provides/],
  ],
  ["rename to a bad name", "name: a\nmcp_servers:\n  s:\n    command: y\n    rename: { q: 'x y' }\n", 5, 18, [
    /^mcp_servers\.s\.rename\.q must be a tool name/,
  ]],
  [
    "lifecycle session with transport http",
    "name: a\nserve:\n  transport: http\n  lifecycle: session\n",
    4,
    14,
    [
      /^serve\.lifecycle must be standalone when serve\.transport is http/,
    ],
  ],
  [
    "lifecycle standalone with transport stdio",
    "name: a\nserve:\n  transport: stdio\n  lifecycle: standalone\n",
    3,
    14,
    [/^serve\.transport must be http when serve\.lifecycle is standalone/],
  ],
  ["serve.command not hermit serve", "name: a\nserve:\n  command: node server.js\n", 3, 12, [
    /^serve\.command must start with 'hermit serve', e\.g\. command: hermit serve \./,
  ]],
  ["serve.command hermit served", "name: a\nserve:\n  command: hermit served .\n", 3, 12, [
    /^serve\.command must start/,
  ]],
  ["serve null", "name: a\nserve:\n", 2, 7, [/^serve must be a mapping of serve fields/]],
  ["exports as a list", "name: a\nexports: [a]\n", 2, 10, [
    /^exports must be a mapping/,
    /exports: \{ tools: \[add_note\] \}/,
  ]],
  ["a negative timeout", "name: a\nmcp_servers:\n  s:\n    command: x\n    timeout: -1\n", 5, 14, [
    /^mcp_servers\.s\.timeout must be more than 0 seconds/,
  ]],
  // a timer cannot wait longer: a tool with timeout 2592000 (30 days) was killed at once
  [
    "a command tool timeout of 30 days",
    "name: a\ntools:\n  t:\n    run: [a]\n    timeout: 2592000\n",
    5,
    14,
    [
      /^tools\.t\.timeout must be at most 2147483 seconds \(about 24\.8 days\)/,
    ],
  ],
  ["an idle shutdown of 30 days", "name: a\nserve:\n  idle_shutdown_seconds: 2592000\n", 3, 26, [
    /^serve\.idle_shutdown_seconds must be at most 2147483 seconds/,
  ]],
  ["a fractional port", "name: a\nserve:\n  lifecycle: standalone\n  port: 80.5\n", 4, 9, [
    /^serve\.port must be a whole port number/,
  ]],
  ["a port out of range", "name: a\nserve:\n  lifecycle: standalone\n  port: 70000\n", 4, 9, [
    /^serve\.port must be a port number from 0 to 65535/,
  ]],
  ["a bad tool name", "name: a\ntools:\n  'add note':\n    run: [a]\n", 3, 3, [
    /^tools: 'add note' is not a usable tool name; use letters, digits, _ or -/,
  ]],
  ["an env value that is a number", "name: a\ntools:\n  x:\n    run: [a]\n    env: { N: 1 }\n", 5, 15, [
    /^tools\.x\.env\.N must be a string \(quote numbers and booleans\)/,
  ]],
  ["a context path outside the adapter", "name: a\nexports:\n  context: ../../etc/passwd\n", 3, 12, [
    /^exports\.context must be a relative path inside the adapter, e\.g\. CONTEXT\.md/,
  ]],
  ["an absolute skills path", "name: a\nexports:\n  skills: /home/x/skills\n", 3, 11, [
    /^exports\.skills must be a relative path inside the adapter/,
  ]],
  ["__proto__ as a server name", "name: a\nmcp_servers:\n  __proto__:\n    command: x\n", 3, 3, [
    /^mcp_servers\.__proto__: '__proto__' cannot be used as a name; choose another/,
  ]],
  ["YAML syntax: unclosed quote", 'name: "a\n', 1, 7, [
    /^not valid YAML: the " opened here is never closed; end the value with " on the same line$/,
  ]],
  [
    "YAML syntax: a key indented past a plain value above it",
    "name: a\ntools:\n  t:\n    description: Says hi\n     timeout: 10\n",
    5,
    6,
    [
      /^not valid YAML: this key is indented 5 spaces, more than description above it \(4 spaces\), so YAML reads it as more of that value; keys of one mapping start in the same column$/,
    ],
  ],
  [
    "YAML syntax: the first key of a mapping indented less than the next",
    "name: a\ntools:\n  t:\n   description: Says hi\n    run: [x]\n",
    5,
    5,
    [
      /^not valid YAML: this key is indented 4 spaces, more than description above it \(3 spaces\)/,
    ],
  ],
  ["YAML syntax: bad indentation", "name: a\nexports:\n  tools: [a]\n   context: C.md\n", 4, 4, [
    /^not valid YAML: this key is indented 3 spaces, its neighbours 2; keys of one mapping start in the same column$/,
  ]],
  ["YAML syntax: an unclosed mapping", "name: a\nexports: { tools: [a]\nserve:\n  command: x\n", 2, 10, [
    /^not valid YAML: the \{ opened here is never closed; end the mapping with \}$/,
  ]],
  [
    "YAML syntax: ': ' in a list item's value",
    "name: a\ntools:\n  x:\n    run: [a]\n    description: note: b\n",
    5,
    18,
    [
      /^not valid YAML: the value of description contains ': ', which YAML reads as a new key; quote the value: description: 'note: b'$/,
    ],
  ],
  ["YAML syntax: ': ' and a single quote", "name: a\ndescription: it's: here\n", 2, 14, [
    /^not valid YAML: the value of description contains ': '.*; quote the value: description: "it's: here"$/,
  ]],
  ["YAML syntax: a backtick", "name: a\ndescription: `x`\n", 2, 14, [
    /^not valid YAML: a value cannot start with '`'; quote it: description: '`x`'$/,
  ]],
  ["duplicate keys", "name: a\nexports: {}\nname: b\n", 3, 1, [
    /^not valid YAML: 'name' appears twice in this mapping \(first on line 1\); a key may appear only once/,
  ]],
  ["empty file", "", 1, 1, [
    /^the manifest is empty; it needs at least a name \(name: my-tools\), and exports: \{ tools: \[…\] \} to serve tools$/,
  ]],
  ["only comments", "# nothing yet\n\n", 1, 1, [/^the manifest is empty/]],
  ["top-level list", "- name: a\n", 1, 1, [/^the manifest must be a mapping of keys \(name:, exports:/]],
  ["top-level scalar", "notes\n", 1, 1, [/^the manifest must be a mapping of keys/]],
  ["tab indentation", "name: a\nexports:\n\ttools: [a]\n", 3, 1, [
    /^not valid YAML: a tab indents this line; indent with spaces$/,
  ]],
  [
    "a tab among space indentation, deeper in",
    "name: a\ntools:\n  x:\n\trun: [a]\n    description: d\n",
    4,
    1,
    [
      /^not valid YAML: a tab indents this line; indent with spaces$/,
    ],
  ],
  [
    "a tab inside a block scalar is text",
    "name: a\ntools:\n  x:\n    run: [a]\n    description: |\n      a\tb\n  y: [\n",
    7,
    6,
    [
      /^not valid YAML: the \[ opened here is never closed; end the list with \]$/,
    ],
  ],
  ["two documents", "name: a\n---\nname: b\n", 2, 1, [
    /^not valid YAML: a second document starts here \(---\)/,
  ]],
  ["an alias without an anchor", "name: a\ndescription: *nope\n", 2, 14, [
    /^not valid YAML: alias \*nope has no anchor &nope before it/,
  ]],
  [
    "an alias bomb",
    [
      "name: a",
      'x1: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
      "x2: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
      "x3: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
      "x4: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
      "x5: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
      "x6: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]",
      "x7: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]",
      "",
    ].join("\n"),
    1,
    1,
    [/^not valid YAML: too many aliases \(\*name\) to expand; write the values out instead/],
  ],
  ["a !!binary tag stays text", "!!binary aGVsbG8=\n", 1, 10, [/^the manifest must be a mapping of keys/]],
  ["a !!set tag stays a mapping", "name: a\ntools: !!set { x }\n", 2, 16, [
    /^tools\.x must be a mapping of command tool fields/,
  ]],
  ["a merge key", "name: a\nmcp_servers:\n  s:\n    <<: { command: x }\n", 4, 5, [
    /unknown key; YAML merge keys are not supported; write the fields out/,
  ]],
  ["sandbox neither off nor a mapping", "name: a\nsandbox: on\n", 2, 10, [
    /^sandbox must be off or a mapping of read, deny_read, write, network, require/,
    /sandbox: \{ write: \[data\/\], network: none \}, or sandbox: off/,
  ]],
  ["sandbox: false", "name: a\ntools:\n  x:\n    run: [a]\n    sandbox: false\n", 5, 14, [
    /^tools\.x\.sandbox must be off or a mapping/,
    /to run unconfined write sandbox: off/,
  ]],
  ["an unknown sandbox key", "name: a\nsandbox:\n  writes: [data]\n", 3, 3, [
    /^sandbox\.writes: unknown key; did you mean 'write'\?/,
  ]],
  [
    "sandbox paths not a list",
    "name: a\nmcp_servers:\n  s:\n    command: x\n    sandbox: { read: 3 }\n",
    5,
    22,
    [
      /^mcp_servers\.s\.sandbox\.read must be a list of paths, e\.g\. read: \[/,
    ],
  ],
  ["an empty sandbox path", "name: a\nsandbox:\n  deny_read: [ok, '']\n", 3, 19, [
    /^sandbox\.deny_read must hold paths \(strings\)/,
  ]],
  ["a sandbox network word", "name: a\nsandbox:\n  network: some\n", 3, 12, [
    /^sandbox\.network must be none, all, or a list of host:port destinations, e\.g\. network: \[api\.github\.com:443\]/,
  ]],
  [
    "a destination without a port",
    "name: a\nsandbox:\n  network: [api.github.com:443, example.com]\n",
    3,
    33,
    [
      /^sandbox\.network\[1\]: 'example\.com' is not a host:port destination; write e\.g\. api\.github\.com:443/,
    ],
  ],
  ["a destination port out of range", "name: a\nsandbox:\n  network: ['h.example:70000']\n", 3, 13, [
    /^sandbox\.network\[0\]: 'h\.example:70000' is not a host:port destination/,
    /a port from 1 to 65535/,
  ]],
  ["sandbox require not a boolean", "name: a\nsandbox:\n  require: 'yes'\n", 3, 12, [
    /^sandbox\.require must be true or false/,
  ]],
  [
    "sandbox on a remote server",
    "name: a\nmcp_servers:\n  r:\n    url: https://h/mcp\n    sandbox: off\n",
    5,
    5,
    [
      /^mcp_servers\.r\.sandbox applies to local \(command\) servers only; a remote server runs elsewhere, so remove it/,
    ],
  ],
];

describe("invalid manifests", () => {
  for (const [what, text, line, col, patterns] of INVALID) {
    it(`${what} → ${line}:${col}`, () => {
      const err = refused(text);
      assert.equal(err.exitCode, 2);
      assert.ok(err instanceof HermitError);
      const first = err.issues[0];
      assert.equal(`${first.line}:${first.col}`, `${line}:${col}`, `position of: ${first.message}`);
      const prefix = `${SHOWN}:${line}:${col}: `;
      const head = err.message.split("\n")[0];
      assert.ok(head.startsWith(prefix), `${JSON.stringify(head)} starts with ${prefix}`);
      for (const p of patterns) assert.match(head.slice(prefix.length), p);
      assert.doesNotMatch(err.message, /\n\s+at /, "no stack trace");
      assert.doesNotMatch(
        err.message,
        /Invalid input|Too (small|big)|expected \w+, received/,
        "no zod jargon",
      );
      for (const l of err.message.split("\n")) assert.match(l, /^.+:\d+:\d+: \S.*$/);
    });
  }

  it("each case is its own manifest with its own expected error (no copy-pasted cases)", () => {
    const seen = new Map<string, string>();
    for (const [what, text, line, col, patterns] of INVALID) {
      for (const key of [`name ${what}`, `manifest ${text}`, `error ${line}:${col} ${patterns.join(" ")}`]) {
        assert.ok(!seen.has(key), `'${what}' repeats '${seen.get(key)}' (${key.split(" ")[0]})`);
        seen.set(key, what);
      }
    }
  });

  it("reports every problem, top to bottom, each on its own line", () => {
    const err = refused("zzz: 1\nname: Bad\nexports:\n  tools: [a, a]\nserve:\n  command: x\n");
    assert.deepEqual(err.issues.map((i) => `${i.line}:${i.col} ${i.path}`), [
      "1:1 zzz",
      "2:7 name",
    ]);
    const later = refused("name: a\nexports:\n  tools: [a, a]\nserve:\n  command: x\n");
    assert.deepEqual(later.issues.map((i) => `${i.line}:${i.col} ${i.path}`), [
      "3:14 exports.tools[1]",
      "5:12 serve.command",
    ]);
    assert.equal(later.message.split("\n").length, 2);
  });

  it("caps the list at 20 lines plus one that still has a position", () => {
    const text = "name: a\n" + Array.from({ length: 25 }, (_, i) => `k${i}: 1\n`).join("");
    const err = refused(text);
    assert.equal(err.issues.length, 25);
    const lines = err.message.split("\n");
    assert.equal(lines.length, 21);
    assert.equal(lines[20], `${SHOWN}:22:1: … and 5 more problems from here on`);
  });

  it("quotes keys that would break the one-line form", () => {
    const err = refused('name: a\n"a\\nb": 1\ntools:\n  x:\n    run: [a]\n    env: { "A\\nB": 1 }\n');
    assert.deepEqual(err.message.split("\n").map((l) => l.slice(SHOWN.length)), [
      ':2:1: ["a\\nb"]: unknown key; known keys here: name, version, description, exports, tools, mcp_servers, serve, sandbox',
      ':6:20: tools.x.env["A\\nB"] must be a string (quote numbers and booleans)',
    ]);
  });

  it("CRLF line endings and a byte order mark do not shift positions", () => {
    assert.equal(refused("name: a\r\nexprots: 1\r\n").issues[0].line, 2);
    const bom = refused("\uFEFFname: a\nexprots: 1\n").issues[0];
    assert.equal(`${bom.line}:${bom.col}`, "2:1");
  });

  it("a detail the parser gives blank or invisible is shown escaped: no message ends in a bare colon", () => {
    // a carriage return without a line feed after a block scalar's > (a file saved with CR endings)
    assert.equal(
      refused("name: a\ndescription: >\r").message,
      `${SHOWN}:2:15: not valid YAML: a carriage return (\\r) ends this line without a line feed; save the file with LF (or CRLF) line endings`,
    );
    // an alias whose name is an invisible character (a byte order mark, a line separator)
    for (const [name, shown] of [["\uFEFF", "\\ufeff"], ["\u2028", "\\u2028"]]) {
      assert.equal(
        refused(`name: a\ndescription: *${name}\n`).message,
        `${SHOWN}:2:14: not valid YAML: the alias * is followed by "${shown}", an invisible character, and names no anchor; remove it, or quote a value that starts with *`,
      );
    }
    // any message of the parser's that ends in such a detail, or in none
    assert.equal(libraryLine("Not a YAML token: \r\n  more"), 'Not a YAML token: "\\r"');
    assert.equal(libraryLine("Not a YAML token: \u0085x"), 'Not a YAML token: "\\u0085x"');
    assert.equal(libraryLine("Could not resolve tag: \u{F0000}"), 'Could not resolve tag: "\\udb80\\udc00"');
    assert.equal(
      libraryLine("Unresolved alias (the anchor must be set before the alias): "),
      "Unresolved alias (the anchor must be set before the alias)",
    );
    assert.equal(
      libraryLine("Block scalar header includes extra characters: |x  "),
      "Block scalar header includes extra characters: |x",
    );
  });

  it("deep nesting is refused, not a crash", () => {
    const err = refused("name: a\nx: " + "[".repeat(5000) + "]".repeat(5000) + "\n");
    assert.ok(err.issues.length > 0);
  });
});

describe("fixtures/manifests/invalid", () => {
  const root = path.join(fixtures, "manifests", "invalid");
  for (const name of readdirSync(root).sort()) {
    it(`${name}: exactly the message in expected.txt`, () => {
      const dir = path.join(root, name);
      const expected = readFileSync(path.join(dir, "expected.txt"), "utf8").trimEnd();
      const shown = displayPath(path.join(dir, "hermit.yaml"));
      assert.throws(() => loadManifest(dir), (err: unknown) => {
        assert.ok(err instanceof ManifestError);
        assert.equal(err.exitCode, 2);
        assert.equal(err.message, expected.replace(/^hermit\.yaml:/, `${shown}:`));
        return true;
      });
    });
  }
});

describe("loadManifest from a directory", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("reads DIR/hermit.yaml, or the file itself", () => {
    const dir = path.join(tmp.path, "ok");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "hermit.yaml"), "name: ok\n");
    assert.equal(loadManifest(dir).name, "ok");
    assert.equal(loadManifest(path.join(dir, "hermit.yaml")).dir, dir);
    const { manifest, source } = loadManifestWithSource(dir);
    assert.equal(manifest.file, path.join(dir, "hermit.yaml"));
    assert.deepEqual(source.locate(["name"]), { line: 1, col: 7 });
  });

  it("a directory without hermit.yaml says how to make one (exit 2)", () => {
    const dir = path.join(tmp.path, "empty");
    mkdirSync(dir);
    assert.throws(() => loadManifest(dir), (err: unknown) => {
      assert.ok(err instanceof HermitError && !(err instanceof ManifestError));
      assert.equal(err.exitCode, 2);
      assert.match(err.message, /hermit\.yaml: not found; create one with 'hermit init /);
      return true;
    });
  });

  it("a missing directory is a usage error (exit 2)", () => {
    assert.throws(() => loadManifest(path.join(tmp.path, "nope")), (err: unknown) => {
      assert.ok(err instanceof HermitError);
      assert.equal(err.exitCode, 2);
      assert.match(err.message, /no such directory; pass an adapter directory/);
      return true;
    });
  });

  it("a broken file is a ManifestError naming that file", () => {
    const dir = path.join(tmp.path, "broken");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "hermit.yaml"), "name: a\nrun: x\n");
    assert.throws(() => loadManifest(dir), (err: unknown) => {
      assert.ok(err instanceof ManifestError);
      assert.equal(
        err.message,
        `${displayPath(path.join(dir, "hermit.yaml"))}:2:1: run: unknown key; ` +
          "known keys here: name, version, description, exports, tools, mcp_servers, serve, sandbox",
      );
      return true;
    });
  });
});
