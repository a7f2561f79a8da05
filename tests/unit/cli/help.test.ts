/**
 * Help a newcomer can use: every registered command's `--help` ends with one or two real examples
 * (its own name, only options it has), the main help names the docs' address, and every README
 * section a message or help text in src/ names exists.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { CommandUnknownOpts as Command } from "@commander-js/extra-typings";
import { buildProgram } from "../../../src/cli/app.ts";
import { DOCS_URL, headingAnchor, REPO_URL } from "../../../src/docs.ts";
import { root } from "../../helpers/hermit.ts";

function helpOf(cmd: Command): string {
  let out = "";
  cmd.configureOutput({ writeOut: (s) => void (out += s), writeErr: (s) => void (out += s) });
  cmd.outputHelp();
  return out;
}

/** The lines of the `Examples:` section (the command line, without its `# comment`). */
function examplesIn(help: string): string[] {
  const lines = help.split("\n");
  const start = lines.indexOf("Examples:");
  if (start < 0) return [];
  const out: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (!l.startsWith("  ")) break;
    out.push(l.trim().replace(/\s+#.*$/, ""));
  }
  return out;
}

describe("help", () => {
  const program = buildProgram(() => {}) as unknown as Command;

  it("every command's --help has one or two examples of itself, with options it has", () => {
    assert.ok(program.commands.length >= 12, "every command is registered");
    for (const cmd of program.commands) {
      const name = cmd.name();
      const ex = examplesIn(helpOf(cmd));
      assert.ok(
        ex.length >= 1 && ex.length <= 2,
        `hermit ${name} --help: one or two examples, got ${ex.length}`,
      );
      const options = new Set(cmd.options.flatMap((o) => [o.long, o.short]).filter(Boolean));
      for (const e of ex) {
        assert.ok(e.startsWith(`hermit ${name}`), `an example of ${name}: ${e}`);
        const own = e.slice(0, e.includes(" -- ") ? e.indexOf(" -- ") : undefined);
        for (const [, flag] of own.matchAll(/\s(--?[a-z][\w-]*)/g)) {
          assert.ok(options.has(flag), `hermit ${name} has ${flag} (in: ${e})`);
        }
      }
    }
  });

  it("the main help names the docs' address; an unknown command points at it", () => {
    const help = helpOf(program);
    assert.ok(help.includes(`Docs: ${DOCS_URL}`), help);
    assert.ok(DOCS_URL.startsWith(REPO_URL));
    const install = readFileSync(path.join(root, "install.sh"), "utf8");
    assert.ok(
      install.includes(`${REPO_URL}/releases`),
      "the address is the repository install.sh downloads from",
    );
  });

  it("convert's --remove undoes what convert wrote", () => {
    const convert = program.commands.find((c) => c.name() === "convert")!;
    const help = helpOf(convert);
    assert.match(help, /--remove +undo what convert wrote/);
    assert.doesNotMatch(help, /what deploy wrote/);
  });
});

describe("README sections named in messages and help", () => {
  const readme = readFileSync(path.join(root, "README.md"), "utf8");
  const headings = [...readme.matchAll(/^#{1,4} (.+)$/gm)].map((m) => m[1].trim());
  const anchors = new Set([...headings.map(headingAnchor), "readme"]);

  function sources(dir: string): string[] {
    return readdirSync(dir).flatMap((f) => {
      const p = path.join(dir, f);
      return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : [];
    });
  }

  it('exist, whether named by docsSection("…"), README ("…") or an address', () => {
    const named: { where: string; section: string }[] = [];
    for (const file of sources(path.join(root, "src"))) {
      const text = readFileSync(file, "utf8");
      const where = path.relative(root, file);
      for (const m of text.matchAll(/docsSection\("([^"]+)"\)/g)) named.push({ where, section: m[1] });
      for (const m of text.matchAll(/README(?:'s)? \(?"([^"]+)"\)?/g)) named.push({ where, section: m[1] });
      for (const m of text.matchAll(/github\.com\/hermit-sh\/hermit#([\w-]+)/g)) {
        named.push({ where, section: `#${m[1]}` });
      }
    }
    assert.ok(named.some((n) => n.where.endsWith("scaffold.ts")), "init's manifest names a section");
    for (const n of named) {
      const ok = n.section.startsWith("#") ? anchors.has(n.section.slice(1)) : headings.includes(n.section);
      assert.ok(ok, `${n.where} names README section ${n.section}, which does not exist`);
    }
  });

  it("anchors are GitHub's", () => {
    assert.equal(headingAnchor("The adapter"), "the-adapter");
    assert.equal(
      headingAnchor("One shared service: standalone adapters"),
      "one-shared-service-standalone-adapters",
    );
    assert.equal(
      headingAnchor("Fast starts: the schema cache and lazy upstreams"),
      "fast-starts-the-schema-cache-and-lazy-upstreams",
    );
  });
});
