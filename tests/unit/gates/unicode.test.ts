/**
 * Gate 3 and 4's reading of joiners (ZWNJ U+200C, ZWJ U+200D): kept only between letters of the
 * scripts that use them (the cursive joining scripts, Arabic first, and the Brahmic ones) and
 * inside emoji ZWJ sequences; hidden anywhere else, look-alike letters included. The matching
 * fold drops them everywhere.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findHidden, foldForMatching, stripHidden } from "../../../src/gates/unicode.ts";

const ZWNJ = "\u200C";
const ZWJ = "\u200D";

describe("joiners: kept between letters of the scripts that use them", () => {
  const joined: [string, string, string][] = [
    ["Persian", "\u0645\u06CC", "\u062E\u0648\u0627\u0647\u0645"],
    ["Arabic with a vowel mark", "\u0628\u0650", "\u0647"],
    ["Urdu", "\u0646\u06C1", "\u06CC\u06BA"],
    ["Syriac", "\u0710", "\u0712"],
    ["N'Ko", "\u07CA", "\u07CB"],
    ["Mongolian", "\u1820", "\u1821"],
    ["Devanagari after a virama", "\u0915\u094D", "\u0937"],
    ["Bengali", "\u0995\u09CD", "\u09B7"],
    ["Gurmukhi", "\u0A15\u0A4D", "\u0A38"],
    ["Gujarati", "\u0A95\u0ACD", "\u0AB7"],
    ["Oriya", "\u0B15\u0B4D", "\u0B37"],
    ["Tamil", "\u0B95\u0BCD", "\u0BB7"],
    ["Telugu", "\u0C15\u0C4D", "\u0C37"],
    ["Kannada", "\u0C95\u0CCD", "\u0CB7"],
    ["Malayalam", "\u0D15\u0D4D", "\u0D37"],
    ["Sinhala", "\u0D9A\u0DCA", "\u0DC2"],
  ];
  for (const [script, before, after] of joined) {
    for (const joiner of [ZWNJ, ZWJ]) {
      it(`${script}, U+${joiner.codePointAt(0)!.toString(16).toUpperCase()}`, () => {
        const text = `${before}${joiner}${after}`;
        assert.deepEqual(findHidden(text), []);
        assert.equal(stripHidden(text), text);
      });
    }
  }

  it("emoji ZWJ sequences", () => {
    for (
      const text of [
        "\u{1F469}\u200D\u{1F4BB}",
        "\u{1F44D}\u{1F3FD}\u200D\u{1F525}",
        "\u2764\uFE0F\u200D\u{1F525}",
      ]
    ) {
      assert.deepEqual(findHidden(text), [], text);
    }
  });
});

describe("joiners: hidden between letters of other scripts", () => {
  const hidden: [string, string, string][] = [
    ["Latin", "Sa", "fe"],
    ["Cyrillic", "\u0435\u0445", "\u0435\u0441"],
    ["Greek", "\u03B1\u03B2", "\u03B3"],
    ["Armenian", "\u0561", "\u0562"],
    ["Hebrew", "\u05D0", "\u05D1"],
    ["Han", "\u4E2D", "\u6587"],
    ["Hangul", "\uD55C", "\uAE00"],
    ["Thai", "\u0E01", "\u0E02"],
    ["Cyrillic then Arabic", "\u0435", "\u0628"],
    ["Arabic then Cyrillic", "\u0628", "\u0435"],
    ["Devanagari then Latin", "\u0915", "a"],
  ];
  for (const [script, before, after] of hidden) {
    for (const joiner of [ZWNJ, ZWJ]) {
      it(`${script}, U+${joiner.codePointAt(0)!.toString(16).toUpperCase()}`, () => {
        const text = `${before}${joiner}${after}`;
        assert.deepEqual(findHidden(text).map((h) => h.cls), ["joiner"]);
        assert.equal(stripHidden(text), `${before}${after}`);
      });
    }
  }
});

describe("foldForMatching: joiners are dropped wherever they stand", () => {
  it("in a script that uses them and in an emoji sequence, as between look-alikes", () => {
    // the virama goes too: combining marks are dropped, so a diacritic cannot split a phrase
    assert.equal(foldForMatching(`\u0915\u094D${ZWJ}\u0937`).folded, "\u0915\u0937");
    assert.equal(foldForMatching(`\u0645\u06CC${ZWNJ}\u062E`).folded, "\u0645\u06CC\u062E");
    assert.equal(foldForMatching(`\u{1F469}${ZWJ}\u{1F4BB}`).folded, "\u{1F469}\u{1F4BB}");
    assert.equal(foldForMatching(`\u0435\u0445${ZWNJ}\u0435\u0441(`).folded, "exec(");
  });

  it("keeps pointing each folded character at the character it came from", () => {
    const { folded, origin } = foldForMatching(`a${ZWJ}b`);
    assert.equal(folded, "ab");
    assert.deepEqual(origin, [0, 2]);
  });
});
