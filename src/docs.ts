/**
 * Where the documentation is: the README in hermit's repository, and the address of one of its
 * sections by heading. Messages and help text name sections only through `docsSection` (or as the
 * word README then the heading in quotes), so a test can check that every section they name exists.
 */

export const REPO_URL = "https://github.com/hermit-sh/hermit";
export const DOCS_URL = `${REPO_URL}#readme`;

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function headingAnchor(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

/** The address of the README section with this heading, e.g. `…#the-adapter`. */
export function docsSection(heading: string): string {
  return `${REPO_URL}#${headingAnchor(heading)}`;
}
