/**
 * Pi (1.x, built-in MCP) reads what `hermit deploy` wrote: `pi mcp list --json` (run with the
 * Node.js 22 that .ci/hosts brings: Pi needs 22.19) starts each configured server and reports it
 * connected with its tools, in an isolated HOME and PI_CODING_AGENT_DIR, offline. Pi reads
 * `.pi/mcp.json` only in a trusted project: trusting it is the user's call (deploy says so and
 * writes nothing for it), so the test checks the untrusted state first and then trusts the project
 * itself (Pi's trust.json). The project holds a broken entry of the user's, which must fail;
 * `--remove` leaves only that, byte for byte. Again through `--serve-url` to a running standalone
 * service (the token only in HERMIT_SERVE_TOKEN), and from the user's config after `convert`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { examples, hermitBin, runHermit } from "../helpers/hermit.ts";
import {
  hostCli,
  hostNode,
  isolatedEnv,
  parsePiList,
  processesMentioning,
  runHostCli,
} from "../helpers/hosts.ts";
import { kill, Reaper } from "../helpers/procs.ts";
import { type Daemon, startDaemon, writeStandaloneAdapter } from "../helpers/service.ts";
import { copyAdapter, tempDir } from "../helpers/tmp.ts";

const pi = hostCli("pi");
const node = hostNode();

describe("Pi reads what deploy wrote", {
  skip: pi && node ? false : "Pi or its Node.js 22 not installed (npm --prefix .ci/hosts ci)",
}, () => {
  const tmp = tempDir("hermit-host-pi-");
  const home = path.join(tmp.path, "home");
  mkdirSync(home);
  const agentDir = path.join(home, ".pi", "agent");
  const env = { ...isolatedEnv(home), PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" };
  const reaper = new Reaper();
  const notes = copyAdapter(path.join(examples, "notes"), tmp.path);
  const shared = path.join(tmp.path, "shared");
  const broken = { command: hermitBin(), args: ["serve", path.join(tmp.path, "no-such-adapter")] };
  let daemon: Daemon | undefined;

  /** `pi mcp list --json` in `cwd`: exit 0 when every enabled server connected, 1 otherwise. */
  const piList = async (cwd: string, extra: Record<string, string> = {}) => {
    const r = await runHostCli(node!, [pi!, "mcp", "list", "--json"], {
      cwd,
      env: { ...env, ...extra },
      reaper,
    });
    assert.ok(r.code === 0 || r.code === 1, r.stdout + r.stderr);
    return { ...parsePiList(r.stdout), code: r.code, out: r.stdout + r.stderr };
  };
  /** The user's decision to trust `project`, as Pi saves it. */
  const trust = (project: string) => {
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      path.join(agentDir, "trust.json"),
      JSON.stringify({ [realpathSync(project)]: true }) + "\n",
    );
  };

  before(async () => {
    mkdirSync(shared);
    writeStandaloneAdapter(shared);
    daemon = await startDaemon(shared, { env, reaper });
  });

  after(async () => {
    await daemon?.stop();
    await reaper.reap();
    for (const p of processesMentioning(tmp.path)) kill(p.pid);
    tmp.cleanup();
  });

  it("deploy --host pi → ignored until the project is trusted, then connected with its tools; --remove", async () => {
    const project = path.join(tmp.path, "pi-project");
    mkdirSync(path.join(project, ".pi"), { recursive: true });
    const file = path.join(project, ".pi", "mcp.json");
    const mine = JSON.stringify({ mcpServers: { broken } }, null, 2) + "\n";
    writeFileSync(file, mine);

    const d = await runHermit(["deploy", notes, project, "--host", "pi"], { env });
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /Pi reads \.pi\/mcp\.json only in a trusted project/);

    const untrusted = await piList(project);
    assert.equal(untrusted.servers.size, 0, untrusted.out);
    assert.match(untrusted.note ?? "", /ignored because the project is not trusted/);

    trust(project); // the user's call, made here by the test
    const listed = await piList(project);
    assert.equal(listed.code, 1, "the user's broken entry fails, so pi exits 1");
    const served = listed.servers.get("notes");
    assert.equal(served?.state, "connected", listed.out);
    assert.deepEqual(served?.tools, ["add_note", "search_notes", "list_notes"]);
    assert.equal(listed.servers.get("broken")?.state, "failed", listed.out);

    const r = await runHermit(["deploy", notes, project, "--remove"], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(file, "utf8"), mine, "the user's file byte for byte");
    const left = await piList(project);
    assert.deepEqual([...left.servers.keys()], ["broken"], left.out);
  });

  it("deploy --serve-url → connected with the token from HERMIT_SERVE_TOKEN only", async () => {
    const project = path.join(tmp.path, "pi-remote");
    mkdirSync(project);
    const d = await runHermit(["deploy", shared, project, "--host", "pi", "--serve-url", daemon!.url], {
      env,
    });
    assert.equal(d.code, 0, d.stderr);
    const written = readFileSync(path.join(project, ".pi", "mcp.json"), "utf8");
    assert.ok(!written.includes(daemon!.token), "no token in the file");
    assert.match(written, /"Authorization": "Bearer \$\{HERMIT_SERVE_TOKEN\}"/);
    trust(project);
    const withToken = await piList(project, { HERMIT_SERVE_TOKEN: daemon!.token });
    assert.equal(withToken.code, 0, withToken.out);
    assert.equal(withToken.servers.get("shared")?.state, "connected", withToken.out);
    assert.deepEqual(withToken.servers.get("shared")?.tools, [
      "read_graph",
      "create_entities",
      "search_nodes",
    ]);
    // the negative control: without the token the service turns Pi away
    const without = await piList(project);
    assert.notEqual(without.servers.get("shared")?.state, "connected", without.out);
  });

  it("convert --host pi → connected from the user's config in any folder, no trust needed; --remove", async () => {
    const elsewhere = path.join(tmp.path, "pi-elsewhere");
    mkdirSync(elsewhere);
    const c = await runHermit(["convert", notes, "--host", "pi"], { env });
    assert.equal(c.code, 0, c.stderr);
    const listed = await piList(elsewhere);
    assert.equal(listed.code, 0, listed.out);
    assert.equal(listed.servers.get("notes")?.state, "connected", listed.out);
    assert.equal(listed.servers.get("notes")?.scope, "global", listed.out);
    const r = await runHermit(["convert", notes, "--host", "pi", "--remove"], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await piList(elsewhere)).servers.size, 0);
  });
});
