/**
 * `serve.command` is what deploy writes into every host's configuration, and a host runs it for
 * every session: options `hermit serve` does not take, or that start the shared service instead of
 * a session (`--standalone`, a natural guess for a standalone adapter), a flag without its value,
 * or a second DIR made every session fail while `check` said healthy and deploy wrote it. Now
 * `check` reports it as a problem at `serve.command` and deploy refuses it, exit 2.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { serveWordsProblem, splitWords } from "../../../src/deploy/adapter.ts";
import { staticFindings } from "../../../src/check/static.ts";
import { HermitError } from "../../../src/errors.ts";
import { loadManifestWithSource } from "../../../src/manifest/load.ts";
import { deploy, sandbox } from "../../helpers/deploy.ts";

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
