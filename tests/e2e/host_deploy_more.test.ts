/**
 * Gemini CLI and OpenCode read what `hermit deploy` wrote (isolated HOME, XDG dirs and TMPDIR, no
 * login, offline): `gemini mcp list` and `opencode mcp list` start each configured server and
 * report it connected. Each project also holds a broken entry of the user's, which the same parser
 * must see fail; `--remove` leaves the CLI with only that entry and the user's file byte for byte.
 * Gemini CLI reads `.gemini/settings.json` only in a trusted folder: trusting it is the user's call
 * (deploy says so and writes nothing for it), so the test checks the untrusted state first and then
 * trusts the folder itself. Both again through `--serve-url` to a running standalone service, the
 * token only in HERMIT_SERVE_TOKEN, and from the user's config after `convert` (which Gemini CLI too
 * starts only in a trusted folder). No process started here outlives the tests.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { examples, hermitBin, runHermit } from "../helpers/hermit.ts";
import {
  hostCli,
  isolatedEnv,
  parseGeminiList,
  parseOpencodeList,
  processesMentioning,
  runHostCli,
} from "../helpers/hosts.ts";
import { kill, Reaper, waitFor } from "../helpers/procs.ts";
import { type Daemon, startDaemon, writeStandaloneAdapter } from "../helpers/service.ts";
import { copyAdapter, tempDir } from "../helpers/tmp.ts";

const gemini = hostCli("gemini");
const opencode = hostCli("opencode");
const missing = (name: string) => `${name} not installed (npm --prefix .ci/hosts ci)`;

describe("Gemini CLI and OpenCode read what deploy wrote", {
  skip: gemini || opencode ? false : missing("Gemini CLI and OpenCode"),
}, () => {
  const tmp = tempDir("hermit-host-more-");
  const home = path.join(tmp.path, "home");
  mkdirSync(home);
  const env = isolatedEnv(home);
  const reaper = new Reaper();
  const notes = copyAdapter(path.join(examples, "notes"), tmp.path);
  const shared = path.join(tmp.path, "shared");
  // the user's own entry, which cannot start: hermit serving an adapter directory that is not there
  const broken = { command: hermitBin(), args: ["serve", path.join(tmp.path, "no-such-adapter")] };
  let daemon: Daemon | undefined;
  let url = "";
  let token = "";

  const geminiList = async (project: string, extra: Record<string, string> = {}) => {
    const r = await runHostCli(gemini!, ["mcp", "list"], { cwd: project, env: { ...env, ...extra }, reaper });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    return { status: parseGeminiList(r.stderr + r.stdout), out: r.stdout + r.stderr };
  };
  const opencodeList = async (project: string, extra: Record<string, string> = {}) => {
    const r = await runHostCli(opencode!, ["mcp", "list"], {
      cwd: project,
      env: { ...env, ...extra },
      reaper,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    return { status: parseOpencodeList(r.stdout + r.stderr), out: r.stdout + r.stderr };
  };
  const trusted = { GEMINI_CLI_TRUST_WORKSPACE: "true" };

  before(async () => {
    mkdirSync(shared);
    writeStandaloneAdapter(shared);
    daemon = await startDaemon(shared, { env, reaper });
    url = daemon.url;
    token = daemon.token;
  });

  after(async () => {
    await daemon?.stop();
    await reaper.reap();
    for (const p of processesMentioning(tmp.path)) kill(p.pid);
    tmp.cleanup();
  });

  it("Gemini CLI: deploy --host gemini → Disabled until the folder is trusted, then Connected; --remove", {
    skip: gemini ? false : missing("Gemini CLI"),
  }, async () => {
    const project = path.join(tmp.path, "gemini-project");
    mkdirSync(path.join(project, ".gemini"), { recursive: true });
    const settings = path.join(project, ".gemini", "settings.json");
    const mine = JSON.stringify({ mcpServers: { broken } }, null, 2) + "\n";
    writeFileSync(settings, mine);

    const d = await runHermit(["deploy", notes, project, "--host", "gemini"], { env });
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /Gemini CLI reads \.gemini\/settings\.json only in a trusted folder/);
    assert.ok(!existsSync(path.join(home, ".gemini", "trustedFolders.json")), "deploy trusts nothing");

    // untrusted: Gemini CLI lists the entries but starts none of them
    const untrusted = await geminiList(project);
    assert.equal(untrusted.status.get("notes"), "Disabled", untrusted.out);
    assert.equal(untrusted.status.get("broken"), "Disabled", untrusted.out);

    // trusted (the user's call, made here by the test): hermit connects, the broken entry does not
    const listed = await geminiList(project, trusted);
    assert.equal(listed.status.get("notes"), "Connected", listed.out);
    assert.equal(listed.status.get("broken"), "Disconnected", listed.out);

    const r = await runHermit(["deploy", notes, project, "--remove"], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(settings, "utf8"), mine, "the user's settings byte for byte");
    const left = await geminiList(project, trusted);
    assert.deepEqual([...left.status], [["broken", "Disconnected"]], left.out);
  });

  it("Gemini CLI: deploy --serve-url → Connected with the token from HERMIT_SERVE_TOKEN only", {
    skip: gemini ? false : missing("Gemini CLI"),
  }, async () => {
    const project = path.join(tmp.path, "gemini-remote");
    mkdirSync(project);
    const d = await runHermit(["deploy", shared, project, "--host", "gemini", "--serve-url", url], { env });
    assert.equal(d.code, 0, d.stderr);
    const written = readFileSync(path.join(project, ".gemini", "settings.json"), "utf8");
    assert.ok(!written.includes(token), "no token in the file");
    assert.match(written, /"Authorization": "Bearer \$\{HERMIT_SERVE_TOKEN\}"/);
    const withToken = await geminiList(project, { ...trusted, HERMIT_SERVE_TOKEN: token });
    assert.equal(withToken.status.get("shared"), "Connected", withToken.out);
    // the negative control: without the token the service turns Gemini CLI away
    const without = await geminiList(project, trusted);
    assert.equal(without.status.get("shared"), "Disconnected", without.out);
  });

  it("OpenCode: deploy --host opencode → connected next to the user's failing entry; --remove", {
    skip: opencode ? false : missing("OpenCode"),
  }, async () => {
    const project = path.join(tmp.path, "opencode-project");
    mkdirSync(project);
    const config = path.join(project, "opencode.json");
    const mine = JSON.stringify(
      {
        $schema: "https://opencode.ai/config.json",
        mcp: { broken: { type: "local", command: [broken.command, ...broken.args] } },
      },
      null,
      2,
    ) + "\n";
    writeFileSync(config, mine);

    const d = await runHermit(["deploy", notes, project, "--host", "opencode"], { env });
    assert.equal(d.code, 0, d.stderr);
    assert.deepEqual(JSON.parse(readFileSync(config, "utf8")).mcp.notes, {
      type: "local",
      command: [hermitBin(), "serve", notes],
      enabled: true,
    });
    const listed = await opencodeList(project);
    assert.equal(listed.status.get("notes"), "connected", listed.out);
    assert.equal(listed.status.get("broken"), "failed", listed.out);

    const r = await runHermit(["deploy", notes, project, "--remove"], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(config, "utf8"), mine, "the user's config byte for byte");
    const left = await opencodeList(project);
    assert.deepEqual([...left.status], [["broken", "failed"]], left.out);
  });

  it("OpenCode: a config in the V2 shape (mcp.servers) gets a V2 entry, and OpenCode connects it", {
    skip: opencode ? false : missing("OpenCode"),
  }, async () => {
    const project = path.join(tmp.path, "opencode-v2");
    mkdirSync(project);
    const config = path.join(project, "opencode.jsonc");
    writeFileSync(
      config,
      `{\n  // the user's, V2\n  "mcp": {\n    "servers": {\n      "broken": ${
        JSON.stringify({ type: "local", command: [broken.command, ...broken.args] })
      }\n    }\n  }\n}\n`,
    );
    const d = await runHermit(["deploy", notes, project, "--host", "opencode"], { env });
    assert.equal(d.code, 0, d.stderr);
    assert.match(readFileSync(config, "utf8"), /"servers": \{\n.*"broken".*\n\s+"notes": \{/);
    const listed = await opencodeList(project);
    assert.equal(listed.status.get("notes"), "connected", listed.out);
    assert.equal(listed.status.get("broken"), "failed", listed.out);
  });

  it("OpenCode: deploy --serve-url → connected with the token from HERMIT_SERVE_TOKEN only", {
    skip: opencode ? false : missing("OpenCode"),
  }, async () => {
    const project = path.join(tmp.path, "opencode-remote");
    mkdirSync(project);
    const d = await runHermit(["deploy", shared, project, "--host", "opencode", "--serve-url", url], { env });
    assert.equal(d.code, 0, d.stderr);
    const written = readFileSync(path.join(project, "opencode.json"), "utf8");
    assert.ok(!written.includes(token), "no token in the file");
    assert.match(written, /"Authorization": "Bearer \{env:HERMIT_SERVE_TOKEN\}"/);
    const withToken = await opencodeList(project, { HERMIT_SERVE_TOKEN: token });
    assert.equal(withToken.status.get("shared"), "connected", withToken.out);
    // the negative control: without the token the service turns OpenCode away
    const without = await opencodeList(project);
    assert.notEqual(without.status.get("shared"), undefined, without.out);
    assert.notEqual(without.status.get("shared"), "connected", without.out);
  });

  it("convert: Gemini CLI starts the user's entry in a trusted folder only (the report says so)", {
    skip: gemini && opencode ? false : missing("Gemini CLI or OpenCode"),
  }, async () => {
    const c = await runHermit(["convert", notes, "--host", "gemini,opencode"], { env });
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /Gemini CLI starts MCP servers, the user's too, only in a trusted folder/);
    const anywhere = path.join(tmp.path, "anywhere");
    mkdirSync(anywhere);
    const untrusted = await geminiList(anywhere);
    assert.equal(untrusted.status.get("notes"), "Disabled", untrusted.out);
    const listed = await geminiList(anywhere, trusted);
    assert.equal(listed.status.get("notes"), "Connected", listed.out);
    // OpenCode reads the user's config anywhere
    const oc = await opencodeList(anywhere);
    assert.equal(oc.status.get("notes"), "connected", oc.out);

    const r = await runHermit(["convert", notes, "--remove"], { env });
    assert.equal(r.code, 0, r.stderr);
    const geminiLeft = await geminiList(anywhere, trusted);
    assert.deepEqual([...geminiLeft.status], [], geminiLeft.out);
    assert.match(geminiLeft.out, /No MCP servers configured/);
    const opencodeLeft = await opencodeList(anywhere);
    assert.deepEqual([...opencodeLeft.status], [], opencodeLeft.out);
    assert.match(opencodeLeft.out, /No MCP servers configured/);
  });

  it("no process started here outlives the host CLIs and the service", async () => {
    const s = await runHermit(["stop", shared], { env, timeoutMs: 30_000 });
    assert.equal(s.code, 0, s.stderr);
    await waitFor(() => processesMentioning(tmp.path).length === 0, {
      timeoutMs: 15_000,
      what: "the CLIs, hermit and its children to exit",
    }).catch(() => {
      assert.deepEqual(processesMentioning(tmp.path), [], "processes left behind");
    });
  });
});
