/**
 * `serve.command` is what deploy writes into every host's configuration, and a host runs it for
 * every session: options `hermit serve` does not take, or that start the shared service instead of
 * a session (`--standalone`, a natural guess for a standalone adapter), a flag without its value,
 * or a second DIR made every session fail while `check` said healthy and deploy wrote it. Now
 * `check` reports it as a problem at `serve.command` and deploy refuses it, exit 2.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { serveWordsProblem, splitWords } from "../../../src/deploy/adapter.ts";
import { staticFindings } from "../../../src/check/static.ts";
import { HermitError } from "../../../src/errors.ts";
import { loadManifestWithSource } from "../../../src/manifest/load.ts";
import { deploy, goldenCopy, sandbox, snapshot } from "../../helpers/deploy.ts";

const problem = (line: string) => serveWordsProblem(splitWords(line).slice(1));

describe("serve.command as a host session's command line", () => {
  it("DIR, or a relay to a service elsewhere, is fine", () => {
    for (
      const line of [
        "hermit serve",
        "hermit serve .",
        "hermit serve ./sub",
        "hermit serve . --serve-url https://mcp.example.com/mcp --token-file /run/secrets/t",
        "hermit serve --serve-url=https://mcp.example.com/mcp .",
        "hermit serve -- -odd-dir",
      ]
    ) assert.equal(problem(line), undefined, line);
  });

  it("the shared service's options, unknown ones, a missing value and a second DIR are refused", () => {
    assert.match(
      problem("hermit serve . --standalone")!,
      /passes --standalone, which starts the shared service.*serve\.lifecycle: standalone/,
    );
    assert.match(problem("hermit serve . --port 99")!, /passes --port, which starts the shared service/);
    assert.match(problem("hermit serve . --bogus")!, /passes --bogus, which hermit serve does not take/);
    assert.match(problem("hermit serve . --serve-url")!, /passes --serve-url without its value/);
    assert.match(problem("hermit serve . extra")!, /passes more than one DIR/);
  });

  it("a token file sent to a --serve-url on plain http to another host is refused; https or loopback is fine", () => {
    assert.match(
      problem("hermit serve . --serve-url http://10.0.0.5/mcp --token-file /run/secrets/t")!,
      /^passes --serve-url http:\/\/10\.0\.0\.5\/mcp, plain http to another host, so every host session/,
    );
    assert.match(problem("hermit serve --token-file=/t --serve-url=http://h.example/mcp .")!, /plain http/);
    for (
      const line of [
        "hermit serve . --serve-url http://127.0.0.1:8/mcp --token-file /t",
        "hermit serve . --serve-url https://h.example/mcp --token-file /t",
        "hermit serve . --serve-url http://h.example/mcp", // the token comes from HERMIT_SERVE_TOKEN, if at all
      ]
    ) assert.equal(problem(line), undefined, line);
  });

  it("check reports it at serve.command; deploy refuses it, exit 2, nothing written", async () => {
    const s = sandbox();
    try {
      const dir = path.join(s.root, "standalone-guess");
      mkdirSync(dir);
      writeFileSync(
        path.join(dir, "hermit.yaml"),
        "name: guess\nexports: { tools: [hi] }\ntools:\n  hi:\n    description: hi\n    run: [echo, hi]\nserve:\n  command: hermit serve . --standalone\n",
      );
      const found = staticFindings(loadManifestWithSource(dir), { PATH: process.env.PATH });
      const hit = found.filter((f) => f.level === "problem" && /--standalone/.test(f.message));
      assert.equal(hit.length, 1, JSON.stringify(found, null, 2));
      assert.match(hit[0].at ?? "", /hermit\.yaml:8:\d+$/);
      await assert.rejects(deploy(s, { adapter: dir, hosts: ["claude"] }), (err: unknown) => {
        assert.ok(err instanceof HermitError, String(err));
        assert.equal(err.exitCode, 2);
        assert.match(
          err.message,
          /serve\.command 'hermit serve \. --standalone' passes --standalone.*nothing was written$/,
        );
        return true;
      });
    } finally {
      s.cleanup();
    }
  });
});

describe("a path the host would read as its own variable", () => {
  // Seen with the real CLIs: an adapter in `n$HOME-${HOME}` started as `n/home/u-/home/u` under
  // Gemini CLI ("Disconnected") and Claude Code ("Failed to connect"), one in `n{env:HOME}` under
  // OpenCode; deploy wrote them and said nothing.
  const s = sandbox();
  after(s.cleanup);
  const adapterIn = (name: string) => goldenCopy(s.root, name);
  const refused = async (adapter: string, host: string, re: RegExp) => {
    await assert.rejects(deploy(s, { adapter, hosts: [host] }), (err: unknown) => {
      assert.ok(err instanceof HermitError, String(err));
      assert.equal(err.exitCode, 2, err.message);
      assert.match(err.message, re);
      assert.match(err.message, /nothing was written$/);
      return true;
    });
    assert.deepEqual([...snapshot(s.project, []).keys()], [], `${host}: nothing written`);
  };

  it("${…}, $NAME and {env:…} are refused for the hosts that expand them, exit 2, nothing written", async () => {
    const braces = adapterIn("n${HOME}");
    for (const host of ["claude", "cursor", "vscode", "hermes", "gemini"]) {
      await refused(braces, host, /n\$\{HOME\}' holds \$\{HOME\}, which .* reads? as a variable/);
    }
    await refused(adapterIn("n$HOME"), "gemini", /holds \$HOME, which Gemini CLI reads as a variable/);
    await refused(
      adapterIn("n{env:HOME}"),
      "opencode",
      /holds \{env:HOME\}, which OpenCode reads as a variable/,
    );
    await assert.rejects(
      deploy(s, { adapter: braces, hosts: ["claude", "cursor", "codex"] }),
      /which Claude Code and Cursor read as a variable .*; move or rename it, or leave claude, cursor out of --host/,
    );
    await assert.rejects(
      deploy(s, { adapter: braces, hosts: ["hermes"], scope: "user" }),
      /holds \$\{HOME\}, which Hermes Agent reads as a variable/,
    );
  });

  it("hosts that take the path as written get it; a serve.command word the author wrote stays theirs", async () => {
    const r = await deploy(s, { adapter: adapterIn("n$HOME-${HOME} {env:X}"), hosts: ["codex", "pi"] });
    assert.deepEqual(r.hosts.map((h) => h.host), ["codex", "pi"]);
    assert.match(
      readFileSync(path.join(s.project, ".pi", "mcp.json"), "utf8"),
      /n\$HOME-\$\{HOME\} \{env:X\}/,
    );
    await deploy(s, { adapter: adapterIn("n$HOME-${HOME} {env:X}"), hosts: ["codex", "pi"], remove: true });
    const own = goldenCopy(
      s.root,
      "own",
      (y) => y.replace("command: hermit serve .", "command: hermit serve . --token-file ${HOME}/t"),
    );
    const done = await deploy(s, { adapter: own, hosts: ["claude"], dryRun: true });
    assert.equal(done.hosts[0].host, "claude");
  });
});
