/**
 * Landlock, decided purely: the access rights each ABI knows, and the rules that make a policy of
 * "read everything but these, write only those" out of Landlock's allowlist. Landlock grants
 * access beneath a path and has no "except", so hiding `~/.ssh` while reading the rest of `~`
 * means a rule on each sibling along the way (every entry of `/`, of `/home`, of `~` but `.ssh`).
 * That expansion is a function of an injected directory listing, so it is tested without the
 * kernel. Directories along the way keep listing rights only: the names in a protected
 * directory can be listed, never their contents read. Entries created after the launch inside
 * such a directory are not reachable at all (no rule covers them).
 */

/** Filesystem access rights (`LANDLOCK_ACCESS_FS_*`) and the ABI that introduced each. */
export const FS = {
  EXECUTE: 1 << 0,
  WRITE_FILE: 1 << 1,
  READ_FILE: 1 << 2,
  READ_DIR: 1 << 3,
  REMOVE_DIR: 1 << 4,
  REMOVE_FILE: 1 << 5,
  MAKE_CHAR: 1 << 6,
  MAKE_DIR: 1 << 7,
  MAKE_REG: 1 << 8,
  MAKE_SOCK: 1 << 9,
  MAKE_FIFO: 1 << 10,
  MAKE_BLOCK: 1 << 11,
  MAKE_SYM: 1 << 12,
  /** ABI 2: link or rename across directories. */
  REFER: 1 << 13,
  /** ABI 3. */
  TRUNCATE: 1 << 14,
  /** ABI 5: ioctl on character and block devices. */
  IOCTL_DEV: 1 << 15,
} as const;

/** `LANDLOCK_ACCESS_NET_*` (ABI 4). */
export const NET = { BIND_TCP: 1, CONNECT_TCP: 2 } as const;
/** `LANDLOCK_SCOPE_*` (ABI 6). */
export const SCOPE = { ABSTRACT_UNIX_SOCKET: 1, SIGNAL: 2 } as const;

/** Rights that mean something on a file (a rule on a file may hold no others). */
export const FILE_RIGHTS = FS.EXECUTE | FS.WRITE_FILE | FS.READ_FILE | FS.TRUNCATE | FS.IOCTL_DEV;
export const READ_RIGHTS = FS.EXECUTE | FS.READ_FILE | FS.READ_DIR;

/** Every filesystem right the kernel with `abi` handles. */
export function handledFs(abi: number): number {
  if (abi < 1) return 0;
  let mask = (1 << 13) - 1;
  if (abi >= 2) mask |= FS.REFER;
  if (abi >= 3) mask |= FS.TRUNCATE;
  if (abi >= 5) mask |= FS.IOCTL_DEV;
  return mask;
}

export const handledNet = (abi: number): number => abi >= 4 ? NET.BIND_TCP | NET.CONNECT_TCP : 0;
export const handledScopes = (abi: number): number =>
  abi >= 6 ? SCOPE.ABSTRACT_UNIX_SOCKET | SCOPE.SIGNAL : 0;

/** `struct landlock_ruleset_attr`'s size for `abi` (fields the kernel does not know are left out). */
export const rulesetAttrSize = (abi: number): number => abi >= 6 ? 24 : abi >= 4 ? 16 : 8;

export type Level = "deny" | "read" | "write";
const RANK: Record<Level, number> = { deny: 0, read: 1, write: 2 };

/** A policy line: everything at and beneath `path` gets `level`, unless a deeper line says otherwise. */
export interface FsRule {
  path: string;
  level: Level;
  /**
   * Protected only where a mount can do it (the adapter's own policy files inside a writable
   * workspace): without one it stays writable rather than narrow every directory above it.
   */
  soft?: boolean;
  /** A soft rule left writable without a word (what a host or git runs from the workspace). */
  quiet?: boolean;
  /**
   * Holds a host's socket (an agent's, a container engine's, the session bus…: `sockets.ts`),
   * which Landlock does not close (it does not govern connecting to a socket): hidden by a mount
   * wherever a mount namespace can be made.
   */
  socket?: boolean;
  /**
   * A `deny_read:` the adapter declared: a socket or a directory there (which may hold one) is
   * hidden by a mount too (`expandRules` marks it `socket`); a file stays Landlock's (EACCES).
   */
  declaredDeny?: boolean;
}

export interface Entry {
  name: string;
  dir: boolean;
  symlink: boolean;
}

export interface FsView {
  /** The entries of a directory, or undefined when it cannot be listed. */
  list(dir: string): Entry[] | undefined;
  /** Is `path` a directory (false for files, devices; undefined when it does not exist)? */
  isDir(path: string): boolean | undefined;
}

/** One `landlock_add_rule` of type PATH_BENEATH. `follow: false` opens the path with O_NOFOLLOW. */
export interface PathRule {
  path: string;
  access: number;
  follow: boolean;
}

export interface LandlockPlan {
  handledFs: number;
  rules: PathRule[];
  /** Protected paths left to something else (a mount) because a writable path contains them. */
  hidden: string[];
  /** Writable directories narrowed to their existing entries (they lead to a protected path). */
  narrowed: string[];
}

const parentOf = (p: string) => p === "/" ? undefined : p.slice(0, p.lastIndexOf("/")) || "/";

/** Each path the rules name with its level (one path named twice: the narrower access wins). */
function levelsByPath(rules: readonly FsRule[]): Map<string, Level> {
  const byPath = new Map<string, Level>();
  for (const r of rules) {
    const prev = byPath.get(r.path);
    if (prev === undefined || RANK[r.level] < RANK[prev]) byPath.set(r.path, r.level);
  }
  if (!byPath.has("/")) byPath.set("/", "deny");
  return byPath;
}

/** The level at `p`: the deepest path named at or above it decides; nothing named is denied. */
function levelIn(byPath: ReadonlyMap<string, Level>, p: string): Level {
  for (let q: string | undefined = p; q !== undefined; q = parentOf(q)) {
    const l = byPath.get(q);
    if (l !== undefined) return l;
  }
  return "deny";
}

/** What `rules` let a child do at the absolute path `p`, as the planner decides it. */
export function levelAt(rules: readonly FsRule[], p: string): Level {
  return levelIn(levelsByPath(rules), p);
}
const join = (dir: string, name: string) => dir === "/" ? `/${name}` : `${dir}/${name}`;
const within = (p: string, dir: string) => dir === "/" || p === dir || p.startsWith(dir + "/");

/**
 * The Landlock rules for `rules` (absolute, normalized paths; `/` should be among them: the
 * default for everything). `hide(path)` says whether a protected path inside a writable one is
 * covered another way (an empty or a read-only mount in the sandbox's own mount namespace); when
 * it is not, the writable path is expanded around it like any other.
 */
export function planLandlock(
  input: readonly FsRule[],
  abi: number,
  view: FsView,
  hide: (path: string) => boolean = () => false,
): LandlockPlan {
  const handled = handledFs(abi);
  const byPath = levelsByPath(input);
  const levelOf = (p: string): Level => levelIn(byPath, p);
  const hidden: string[] = [];
  for (const [p, l] of byPath) {
    const up = parentOf(p);
    if (l !== "write" && up !== undefined && levelOf(up) === "write" && hide(p)) hidden.push(p);
  }
  for (const h of hidden) byPath.delete(h);

  const paths = [...byPath.keys()];
  const below = (dir: string) => paths.filter((p) => p !== dir && within(p, dir));
  const rights = (level: Level) => level === "write" ? handled : level === "read" ? READ_RIGHTS & handled : 0;

  const rules: PathRule[] = [];
  const narrowed: string[] = [];
  const emit = (path: string, access: number, follow: boolean) => {
    const dir = view.isDir(path);
    if (dir === undefined || access === 0) return;
    rules.push({ path, access: dir ? access : access & FILE_RIGHTS, follow });
  };

  const visit = (dir: string, granted: number): void => {
    const level = levelOf(dir);
    const want = rights(level);
    const inner = below(dir);
    const lessBelow = inner.some((p) => RANK[levelOf(p)] < RANK[level]);
    // nothing can lie beneath a file: a narrower line below it names nothing that exists
    if ((want & ~granted) !== 0 && (!lessBelow || view.isDir(dir) === false)) {
      emit(dir, want, true);
      granted |= want;
    } else if ((want & ~granted) !== 0) {
      // a protected path lies beneath: list this directory and grant each entry but that one
      const entries = view.list(dir);
      if (entries === undefined) return;
      if (level !== "deny" && view.isDir(dir)) emit(dir, FS.READ_DIR & handled, true);
      if (level === "write") narrowed.push(dir);
      for (const e of entries) {
        const p = join(dir, e.name);
        if (inner.some((q) => within(q, p))) visit(p, granted | (FS.READ_DIR & handled));
        else if (!e.symlink) emit(p, want, false);
      }
      return;
    }
    // granted here already: go down to the nearest paths that need more
    const next = inner.filter((p) => !inner.some((q) => q !== p && within(p, q)));
    for (const p of next) visit(p, granted);
  };
  visit("/", 0);
  return { handledFs: handled, rules: dedupe(rules), hidden, narrowed };
}

function dedupe(rules: PathRule[]): PathRule[] {
  const seen = new Map<string, PathRule>();
  for (const r of rules) {
    const prev = seen.get(r.path);
    if (prev) prev.access |= r.access;
    else seen.set(r.path, { ...r });
  }
  return [...seen.values()];
}
