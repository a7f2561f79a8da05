/**
 * Trust tiers (gate 5) and server-to-client requests (gate 6) end to end, through the compiled
 * binary and a real MCP client, against the hostile fixture server marked `trust: untrusted`:
 * a write tool is refused when the host cannot elicit, runs only after an accept whose answer is
 * yes, and is refused after a decline, a "no", a cancel, a timeout or an error; a read-only tool
 * needs no approval; `hermit call` asks at a TTY and refuses without one. Sampling is forwarded
 * with maxTokens clamped and refused past the rate limit and the tool-round cap; form-mode
 * elicitation is forwarded, URL mode never reaches the host. What reaches the host of an upstream's
 * sampling and elicitation requests is sanitized (gate 4).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import {
  type CreateMessageRequest,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { HOSTILE_READ_ONLY, strayTags, writeGatesAdapter } from "../helpers/gates.ts";
import { hermitBin, hermitEnv, runHermit } from "../helpers/hermit.ts";
import { connectServe, type HermitSession, textOf } from "../helpers/mcp.ts";
import { collect, kill, readUntil, Reaper, waitFor } from "../helpers/procs.ts";
import { requirements, scriptNeed } from "../helpers/requirements.ts";
import { tempDir } from "../helpers/tmp.ts";

const tags = (s: string) => [...s].map((c) => String.fromCodePoint(0xE0000 + c.codePointAt(0)!)).join("");
const NO_ELICITATION =
  "refused: write_note on the untrusted server 'hostile' needs the user's approval and this client cannot ask the user for approval (no elicitation support); it was NOT run. Do not retry without explicit user direction.";

function setup(tmp: { path: string }): { dir: string; log: string; env: Record<string, string> } {
  const dir = writeGatesAdapter(path.join(tmp.path, "gates"), {
    trust: "untrusted",
    readOnlyTools: HOSTILE_READ_ONLY,
    sampling: "{ max_rpm: 3, max_tokens_cap: 64 }",
    elicitation: "{ timeout: 3 }",
  });
  const log = path.join(tmp.path, "writes.log");
  return { dir, log, env: { ...process.env as Record<string, string>, HOSTILE_LOG: log, DECLARED_SRC: "x" } };
}

const written = (log: string) => (existsSync(log) ? readFileSync(log, "utf8") : "");

describe("trust: a host without elicitation", () => {
  const tmp = tempDir("hermit-trust-");
  const reaper = new Reaper();
  let s: HermitSession;
  let ctx: ReturnType<typeof setup>;

  before(async () => {
    ctx = setup(tmp);
    s = await connectServe(ctx.dir, { cwd: tmp.path, env: ctx.env });
    reaper.track(s.pid);
  });
  after(async () => {
    await s?.close();
    await reaper.reap();
    tmp.cleanup();
  });

  it("refuses the write tool, which never runs", async () => {
    const r = await s.client.callTool({ name: "write_note", arguments: { text: "no" } });
    assert.equal(r.isError, true);
    assert.equal(textOf(r), NO_ELICITATION);
    assert.equal(written(ctx.log), "");
    await waitFor(
      () => (/refused: write_note on untrusted mcp_servers\.hostile: approval unavailable/).test(s.stderr()),
      { timeoutMs: 5000, what: "the log line on stderr" },
    );
  });

  it("refuses a tool without annotations (no readOnlyHint: true)", async () => {
    const r = await s.client.callTool({ name: "write_unannotated", arguments: { text: "no" } });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /^refused: write_unannotated on the untrusted server 'hostile'/);
    assert.equal(written(ctx.log), "");
  });

  it("runs a tool the manifest declares read-only without asking", async () => {
    const r = await s.client.callTool({ name: "read_note", arguments: {} });
    assert.equal(r.isError, undefined);
  });

  it("does not believe the server: liar claims readOnlyHint: true, writes, and is refused", async () => {
    const r = await s.client.callTool({ name: "liar", arguments: { text: "lie" } });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /^refused: liar on the untrusted server 'hostile' needs the user's approval/);
    assert.equal(written(ctx.log), "");
  });

  it("tools/list never shows a tool hermit does not believe as read-only (hosts auto-approve those)", async () => {
    const { tools } = await s.client.listTools();
    const hint = (name: string) => tools.find((t) => t.name === name)?.annotations?.readOnlyHint;
    assert.equal(hint("liar"), false);
    assert.equal(hint("read_note"), true);
    assert.equal(hint("write_note"), false);
    assert.equal(hint("write_unannotated"), undefined);
  });

  it("declines the upstream's sampling and elicitation (the host supports neither)", async () => {
    const sampled = await s.client.callTool({ name: "ask_sampling", arguments: {} });
    assert.equal(sampled.isError, true);
    assert.match(textOf(sampled), /sampling refused: the host does not support sampling/);
    const elicited = await s.client.callTool({ name: "ask_elicitation", arguments: {} });
    assert.equal(textOf(elicited), 'elicited: {"action":"decline"}');
  });
});

describe("trust: a host with elicitation and sampling", () => {
  const tmp = tempDir("hermit-trust-");
  const reaper = new Reaper();
  let s: HermitSession;
  let ctx: ReturnType<typeof setup>;
  const asked: ElicitRequest["params"][] = [];
  let answer: (p: ElicitRequest["params"], signal: AbortSignal) => Promise<ElicitResult> = () =>
    Promise.reject(new Error("no answer set"));
  const sampled: { maxTokens: number }[] = [];

  before(async () => {
    ctx = setup(tmp);
    s = await connectServe(ctx.dir, {
      cwd: tmp.path,
      env: ctx.env,
      capabilities: { elicitation: {}, sampling: {} },
      setup: (client) => {
        client.setRequestHandler(ElicitRequestSchema, (req, extra) => {
          asked.push(req.params);
          return answer(req.params, extra.signal);
        });
        client.setRequestHandler(CreateMessageRequestSchema, (req): CreateMessageResult => {
          sampled.push({ maxTokens: req.params.maxTokens });
          return {
            role: "assistant",
            model: "test-model",
            content: { type: "text", text: `hi${tags("leak")}` },
          };
        });
      },
    });
    reaper.track(s.pid);
  });
  after(async () => {
    await s?.close();
    await reaper.reap();
    tmp.cleanup();
  });

  const write = async (text: string) => {
    const before = asked.length;
    const r = await s.client.callTool({ name: "write_note", arguments: { text } }, undefined, {
      timeout: 60_000,
    });
    assert.equal(asked.length, before + 1, "exactly one approval was asked");
    return r;
  };

  it("asks, naming the server and the tool and saying it may modify external state; runs after yes", async () => {
    answer = () => Promise.resolve({ action: "accept", content: { approve: true } });
    const r = await write("approved-1");
    assert.equal(r.isError, undefined, textOf(r));
    assert.equal(textOf(r), "wrote approved-1");
    assert.equal(written(ctx.log), "approved-1\n");
    const q = asked.at(-1)!;
    assert.equal(
      q.message,
      "The untrusted MCP server 'hostile' wants to run the tool 'write_note', which may modify external state.\n" +
        'Arguments (1):\n  "text": "approved-1"\nAllow this call?',
    );
    assert.deepEqual(
      Object.keys((q as { requestedSchema: { properties: object } }).requestedSchema.properties),
      ["approve"],
    );
  });

  it("the answer counts, not the button: accept with approve: false is refused", async () => {
    answer = () => Promise.resolve({ action: "accept", content: { approve: false } });
    const r = await write("accepted-but-no");
    assert.equal(r.isError, true);
    assert.match(textOf(r), /needs the user's approval and the user declined it; it was NOT run/);
  });

  it("refused after a decline", async () => {
    answer = () => Promise.resolve({ action: "decline" });
    const r = await write("declined");
    assert.equal(r.isError, true);
    assert.match(textOf(r), /the user declined it; it was NOT run/);
  });

  it("refused after a cancel", async () => {
    answer = () => Promise.resolve({ action: "cancel" });
    const r = await write("cancelled");
    assert.match(textOf(r), /the approval was cancelled or timed out; it was NOT run/);
  });

  it("refused when no answer comes within elicitation.timeout", async () => {
    answer = (_p, signal) =>
      new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
    const t0 = Date.now();
    const r = await write("timed-out");
    assert.match(textOf(r), /the approval was cancelled or timed out; it was NOT run/);
    assert.ok(Date.now() - t0 >= 2500, "waited for the 3 s timeout");
  });

  it("refused when the approval path fails (the host errors, or answers off-schema)", async () => {
    answer = () => Promise.reject(new Error("the host's prompt crashed"));
    assert.match(textOf(await write("errored")), /asking for approval failed .*; it was NOT run/);
    answer = () => Promise.resolve({ action: "accept", content: { approve: "yes" } as never });
    assert.match(textOf(await write("off-schema")), /asking for approval failed .*; it was NOT run/);
  });

  it("nothing refused ever ran", () => {
    assert.equal(written(ctx.log), "approved-1\n");
  });

  it("liar needs the user's approval: asked, declined, not run", async () => {
    const before = asked.length;
    answer = () => Promise.resolve({ action: "decline" });
    const no = await s.client.callTool({ name: "liar", arguments: { text: "lie-declined" } });
    assert.match(textOf(no), /the user declined it; it was NOT run/);
    assert.equal(asked.length, before + 1);
    assert.match(asked.at(-1)!.message, /wants to run the tool 'liar', which may modify external state/);
    assert.equal(written(ctx.log), "approved-1\n");
  });

  it("a tool the manifest declares read-only needs no approval", async () => {
    const before = asked.length;
    const r = await s.client.callTool({ name: "read_note", arguments: {} });
    assert.equal(textOf(r), "approved-1\n");
    assert.equal(asked.length, before);
  });

  it("sampling is forwarded with maxTokens clamped to max_tokens_cap, the answer sanitized", async () => {
    const r = await s.client.callTool({ name: "ask_sampling", arguments: { maxTokens: 5000 } });
    assert.equal(r.isError, undefined, textOf(r));
    assert.deepEqual(sampled, [{ maxTokens: 64 }]);
    assert.equal(
      textOf(r),
      'sampled: {"model":"test-model","role":"assistant","content":{"type":"text","text":"hi"}}',
    );
  });

  it("sampling past max_tool_rounds is refused without reaching the host", async () => {
    const r = await s.client.callTool({ name: "ask_sampling", arguments: { rounds: 6 } });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /sampling refused: more than 5 tool rounds \(max_tool_rounds\)/);
    assert.equal(sampled.length, 1);
  });

  it("sampling past max_rpm is refused", async () => {
    for (let i = 0; i < 2; i++) {
      const ok = await s.client.callTool({ name: "ask_sampling", arguments: { maxTokens: 10 } });
      assert.equal(ok.isError, undefined, textOf(ok));
    }
    assert.equal(sampled.length, 3);
    const r = await s.client.callTool({ name: "ask_sampling", arguments: {} });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /sampling refused: more than 3 sampling requests a minute \(max_rpm\)/);
    assert.equal(sampled.length, 3, "the host was not asked");
  });

  it("form-mode elicitation from the upstream is forwarded and the host's answer returned", async () => {
    answer = (p) => {
      assert.equal(p.message, "MCP server 'hostile' asks: Your name?");
      return Promise.resolve({ action: "accept", content: { name: "Ada" } });
    };
    const r = await s.client.callTool({ name: "ask_elicitation", arguments: {} });
    assert.equal(textOf(r), 'elicited: {"action":"accept","content":{"name":"Ada"}}');
  });

  it("URL-mode elicitation never reaches the host", async () => {
    const before = asked.length;
    const r = await s.client.callTool({ name: "ask_elicitation", arguments: { mode: "url" } });
    assert.doesNotMatch(textOf(r), /"action":"accept"/);
    assert.equal(asked.length, before);
  });
});

describe("gate 4 towards the host: an upstream's sampling and elicitation requests are sanitized", () => {
  const tmp = tempDir("hermit-trust-");
  const reaper = new Reaper();
  let s: HermitSession;
  const sampled: CreateMessageRequest["params"][] = [];
  const elicited: ElicitRequest["params"][] = [];
  /** hostile.mjs's INVISIBLE: a bidi override, a zero-width space, a soft hyphen, a word joiner. */
  const INVISIBLE = /[\u202E\u200B\u00AD\u2060]/;

  before(async () => {
    const ctx = setup(tmp);
    s = await connectServe(ctx.dir, {
      cwd: tmp.path,
      env: ctx.env,
      capabilities: { elicitation: {}, sampling: {} },
      setup: (client) => {
        client.setRequestHandler(ElicitRequestSchema, (req): ElicitResult => {
          elicited.push(req.params);
          return { action: "accept", content: { name: "Ada" } };
        });
        client.setRequestHandler(CreateMessageRequestSchema, (req): CreateMessageResult => {
          sampled.push(req.params);
          return { role: "assistant", model: "m", content: { type: "text", text: "hi" } };
        });
      },
    });
    reaper.track(s.pid);
  });
  after(async () => {
    await s?.close();
    await reaper.reap();
    tmp.cleanup();
  });

  it("sampling: systemPrompt and messages stripped, reserved and forged _meta keys dropped, includeContext too", async () => {
    const r = await s.client.callTool({ name: "ask_sampling", arguments: { tagged: true } });
    assert.equal(r.isError, undefined, textOf(r));
    assert.equal(sampled.length, 1);
    const p = sampled[0];
    assert.equal(strayTags(JSON.stringify(p)), 0);
    assert.doesNotMatch(JSON.stringify(p), INVISIBLE);
    assert.equal(p.systemPrompt, "system");
    assert.deepEqual(p.messages, [{ role: "user", content: { type: "text", text: "say hi" } }]);
    assert.deepEqual(p._meta, { "com.example.mcp/vendor": "kept" });
    assert.equal(p.includeContext, undefined, "no upstream asks the host for other servers' context");
  });

  it("elicitation: message, schema keys and descriptions stripped, reserved and forged _meta dropped", async () => {
    const r = await s.client.callTool({ name: "ask_elicitation", arguments: { tagged: true } });
    assert.equal(textOf(r), 'elicited: {"action":"accept","content":{"name":"Ada"}}');
    assert.equal(elicited.length, 1);
    const p = elicited[0] as ElicitRequest["params"] & { requestedSchema?: unknown };
    assert.equal(strayTags(JSON.stringify(p)), 0);
    assert.doesNotMatch(JSON.stringify(p), INVISIBLE);
    assert.equal(p.message, "MCP server 'hostile' asks: Your name?");
    assert.deepEqual(p.requestedSchema, {
      type: "object",
      // every field says which server asks, as the message does
      properties: {
        name: {
          type: "string",
          title: "MCP server 'hostile': name",
          description: "MCP server 'hostile': your name",
        },
      },
    });
    assert.deepEqual(p._meta, { "com.example.mcp/vendor": "kept" });
  });
});

describe("trust: hermit call", () => {
  const tmp = tempDir("hermit-trust-");
  const reaper = new Reaper();
  let ctx: ReturnType<typeof setup>;

  before(() => {
    ctx = setup(tmp);
  });
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("without a TTY: refused, exit 4, not run", async () => {
    const r = await runHermit(["call", ctx.dir, "write_note", "--args", '{"text":"call"}'], {
      env: ctx.env,
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stdout, NO_ELICITATION + "\n");
    assert.equal(written(ctx.log), "");
  });

  it("liar, which claims to be read-only, is refused without a TTY (exit 4) and never runs", async () => {
    const r = await runHermit(["call", ctx.dir, "liar", "--args", '{"text":"call-lie"}'], {
      env: ctx.env,
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stdout, /^refused: liar on the untrusted server 'hostile'/);
    assert.equal(written(ctx.log), "");
  });

  it("tools --json shows liar's claim beside what hermit believes", async () => {
    const r = await runHermit(["tools", ctx.dir, "--json"], { env: ctx.env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    const rows =
      (JSON.parse(r.stdout) as { tools: { name: string; readOnly: boolean; claimsReadOnly: boolean }[] })
        .tools;
    const row = (name: string) => rows.find((t) => t.name === name);
    assert.deepEqual(row("liar"), { ...row("liar"), readOnly: false, claimsReadOnly: true });
    assert.deepEqual(row("read_note"), { ...row("read_note"), readOnly: true, claimsReadOnly: true });
    const text = await runHermit(["tools", ctx.dir], { env: ctx.env, timeoutMs: 60_000 });
    assert.match(text.stdout, /^liar .* writes \(claims read-only, not believed\)/m);
  });

  it("a tool the manifest declares read-only runs without a TTY", async () => {
    const r = await runHermit(["call", ctx.dir, "read_note"], { env: ctx.env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
  });

  // util-linux `script` gives hermit a terminal; without it there is nothing to test here
  const tty = requirements([scriptNeed()], "approval at a TTY");

  /** `hermit call … write_note` at a terminal: answer `reply` once it asks; fails past its deadlines. */
  const atTty = async (text: string, reply: string) => {
    const cmd = [hermitBin(), "call", ctx.dir, "write_note", "--args", `'${JSON.stringify({ text })}'`].join(
      " ",
    );
    const child = spawn("script", ["-qec", cmd, "/dev/null"], {
      env: hermitEnv(ctx.env) as Record<string, string>,
      stdio: ["pipe", "pipe", "pipe"],
    });
    reaper.track(child.pid);
    let seen = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (seen += d));
    try {
      await readUntil(child.stdout, "[y/N]", 60_000);
      const r = await collect(child, `${reply}\n`, 60_000, `hermit call at a TTY, answered ${reply}`);
      return { code: r.code, seen };
    } finally {
      if (child.exitCode === null && child.signalCode === null) kill(child.pid!);
    }
  };

  it("at a TTY: asks, runs after y (exit 0), refuses after n (exit 4)", {
    skip: tty.skip,
  }, async () => {
    tty.assertReady();
    const yes = await atTty("tty-yes", "y");
    assert.equal(yes.code, 0, yes.seen);
    assert.match(
      yes.seen,
      /The untrusted MCP server 'hostile' wants to run the tool 'write_note', which may modify external state/,
    );
    assert.match(yes.seen, /wrote tty-yes/);
    const no = await atTty("tty-no", "n");
    assert.equal(no.code, 4, no.seen);
    assert.match(no.seen, /the user declined it; it was NOT run/);
    await waitFor(() => written(ctx.log) === "tty-yes\n", {
      timeoutMs: 5000,
      what: "only the approved write in the log",
    });
  });
});
