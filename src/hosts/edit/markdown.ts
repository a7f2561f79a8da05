/**
 * hermit's blocks in markdown instructions files (CLAUDE.md, AGENTS.md, GEMINI.md,
 * copilot-instructions.md): the text between `<!-- hermit:ID begin … -->` and
 * `<!-- hermit:ID end -->` lines is hermit's; everything else is the user's. A new block goes at
 * the end after a blank line; a re-deploy replaces the block in place; removing it takes the
 * same lines (and that blank line) away again.
 */
import { appendBlock, detectEol, EditError, lineEnd, removeLines } from "./lines.ts";

export function beginMarker(id: string): string {
  return `<!-- hermit:${id} begin: written by hermit deploy, replaced when it runs again -->`;
}

export function endMarker(id: string): string {
  return `<!-- hermit:${id} end -->`;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The block's lines: from its begin line's start to its end line's end. A begin line without its
 * end line is an error: what is hermit's can no longer be told from what is the user's.
 */
function region(text: string, id: string, where: string): [number, number] | undefined {
  const begin = new RegExp(`^[ \\t]*<!-- hermit:${escape(id)} begin\\b.*-->[ \\t]*\\r?$`, "m").exec(text);
  if (!begin) return undefined;
  const endRe = new RegExp(`^[ \\t]*<!-- hermit:${escape(id)} end -->[ \\t]*\\r?$`, "m");
  const rest = text.slice(begin.index);
  const end = endRe.exec(rest);
  if (!end) {
    throw new EditError(
      `${where}: hermit's block for ${id} has its begin line but no '${
        endMarker(id)
      }' line; put that line back where the block ends (or delete the block), then run again`,
    );
  }
  return [begin.index, lineEnd(text, begin.index + end.index)];
}

/** What of `text` is not in a hermit block (any adapter's): the user's own part. Pure. */
export function outsideBlocks(text: string): string {
  return text.replace(
    /^[ \t]*<!-- hermit:([^ ]+) begin\b[^\n]*-->[^\n]*\n[\s\S]*?^[ \t]*<!-- hermit:\1 end -->[ \t]*\r?$/gm,
    "",
  );
}

/** The body of block `id` (without its markers), when there is one. */
export function readBlock(text: string, id: string, where = "the file"): string | undefined {
  const r = region(text, id, where);
  if (!r) return undefined;
  const lines = text.slice(r[0], r[1]).split(/\r?\n/);
  return lines.slice(1, -1).join("\n");
}

export function blockLines(id: string, body: string): string[] {
  return [beginMarker(id), ...body.split("\n"), endMarker(id)];
}

/** Write block `id` holding `body`: in place when it is there, else at the end. */
export function setBlock(text: string, id: string, body: string, where = "the file"): string {
  const eol = detectEol(text);
  const lines = blockLines(id, body);
  const r = region(text, id, where);
  if (r) return text.slice(0, r[0]) + lines.join(eol) + text.slice(r[1]);
  return appendBlock(text, lines, eol);
}

export function removeBlock(text: string, id: string, where = "the file"): string {
  const r = region(text, id, where);
  return r ? removeLines(text, r[0], r[1], true) : text;
}

/** Put back `raw` (the block's text as it was, markers included) in place of block `id`. */
export function restoreBlock(text: string, id: string, raw: string, where = "the file"): string {
  const r = region(text, id, where);
  return r ? text.slice(0, r[0]) + raw + text.slice(r[1]) : text;
}

export function rawBlock(text: string, id: string, where = "the file"): string | undefined {
  const r = region(text, id, where);
  return r ? text.slice(r[0], r[1]) : undefined;
}
