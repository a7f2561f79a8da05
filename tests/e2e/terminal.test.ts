/**
 * What reaches a person's terminal from outside never drives it: at a terminal (util-linux
 * `script` gives hermit one), escape sequences in a call's result (`hermit call`) are shown as
 * `\u001b…` text, and nothing raw reaches it from `hermit tools`, hermit's own colours aside;
 * piped, a result's bytes go on as they are (it is data).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { hermitBin, hermitEnv, runHermit } from "../helpers/hermit.ts";
import { requirements, scriptNeed } from "../helpers/requirements.ts";
import { tempDir } from "../helpers/tmp.ts";

const tty = requirements([scriptNeed()], "what a terminal is shown");
/** An escape sequence that is not one of hermit's own colour codes. */
// deno-lint-ignore no-control-regex
const FOREIGN_ESCAPE = /\x1b(?!\[(?:0|1|2|31|32|33)m)|[\x07\x9b\u202e]/;

describe("at a terminal, text from outside is shown, not obeyed", { skip: tty.skip }, () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());
  const dir = tmp.path;
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: term
exports: { tools: [shout] }
tools:
  shout:
    description: "Says hi.\\e[2K\\e]52;c;ZXZpbA==\\a hidden"
    run: [printf, '\\033]52;c;ZXZpbA==\\007\\033[2Kgone\\n']
`,
  );
  const atTty = (args: string[]) =>
    execFileSync("script", ["-qec", [hermitBin(), ...args].map((a) => `'${a}'`).join(" "), "/dev/null"], {
      env: hermitEnv() as Record<string, string>,
      encoding: "utf8",
      timeout: 60_000,
    });

  it("hermit call shows what a result holds; hermit tools shows nothing raw either", () => {
    tty.assertReady();
    const tools = atTty(["tools", dir]);
    assert.doesNotMatch(tools, FOREIGN_ESCAPE, JSON.stringify(tools));
    const call = atTty(["call", dir, "shout"]);
    assert.match(call, /\\u001b\]52;c;ZXZpbA==\\u0007\\u001b\[2Kgone/, JSON.stringify(call));
    assert.doesNotMatch(call, FOREIGN_ESCAPE, JSON.stringify(call));
  });

  it("piped, a result is data: its bytes go on as they are", async () => {
    const r = await runHermit(["call", dir, "shout"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "\x1b]52;c;ZXZpbA==\x07\x1b[2Kgone\n");
  });
});
