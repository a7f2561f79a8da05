/**
 * A standalone service started with `--token-file` (off loopback, in a container) keeps that file
 * from its confined tools as it keeps `.serve/`: with the token, a tool could open sessions of its
 * own and approve its own calls, or stop the service. The path is no secret (it is on the
 * service's command line, which any process may read); the file is, through a link too.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Reaper } from "../helpers/procs.ts";
import { sandboxRequirements } from "../helpers/sandbox.ts";
import { connectHttp, endHttp, startService, writeServiceAdapter } from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

const ready = sandboxRequirements();
const TOKEN = "token-file-secret-0123456789abcdef";

/** A command tool that reads each file it is given and says what came of it. */
const READER = [
  "exports: { tools: [peek] }",
  "tools:",
  "  peek:",
  "    description: reads files",
  "    input: { type: object, properties: { files: { type: array, items: { type: string } } } }",
  "    run:",
  "      - node",
  "      - -e",
  "      - |",
  "        const fs = require('fs');",
  "        const out = {};",
  "        for (const f of JSON.parse(fs.readFileSync(0, 'utf8')).files) {",
  "          try { out[f] = fs.readFileSync(f, 'utf8').trim(); } catch (e) { out[f] = e.code; }",
  "        }",
  "        process.stdout.write(JSON.stringify(out));",
  "",
].join("\n");

describe("a service's --token-file, from its confined tools", { skip: ready.skip }, () => {
  const tmp = tempDir("hermit-token-file-");
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("is not readable, by its path or through a link; a file beside it is", async () => {
    ready.assertReady();
    const dir = path.join(tmp.path, "adapter");
    writeServiceAdapter(dir, "tokfile", READER);
    const secrets = path.join(tmp.path, "secrets");
    mkdirSync(secrets);
    const tokenFile = path.join(secrets, "token");
    writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    writeFileSync(path.join(secrets, "other"), "not a secret\n");
    const link = path.join(tmp.path, "token-link");
    symlinkSync(tokenFile, link);
    const svc = await startService(dir, { HERMIT_HOME: path.join(tmp.path, "state") }, {
      reaper,
      args: ["--token-file", tokenFile],
    });
    try {
      assert.equal(svc.token, TOKEN, "the service took its token from the file");
      const client = await connectHttp(svc);
      try {
        const files = [tokenFile, link, path.join(secrets, "other")];
        const r = await client.callTool({ name: "peek", arguments: { files } });
        const text = (r.content as { type: string; text: string }[])[0].text;
        const got = JSON.parse(text);
        assert.notEqual(got[tokenFile], TOKEN, text);
        assert.match(got[tokenFile], /^E(ACCES|PERM|NOENT)$/, text);
        assert.match(got[link], /^E(ACCES|PERM|NOENT)$/, text);
        assert.equal(got[path.join(secrets, "other")], "not a secret", text);
      } finally {
        await endHttp(client);
      }
    } finally {
      await svc.stop();
    }
  });
});
