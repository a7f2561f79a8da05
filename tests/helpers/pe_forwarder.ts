/**
 * A minimal Windows x64 DLL that holds nothing but forwarded exports (no code, no entry point),
 * written byte by byte. The Wine smoke test needs one: Debian 12's Wine 8.0 has no
 * `bcryptprimitives.dll`, whose `ProcessPrng` the Bun runtime imports; Windows 10+ and Wine ≥ 9
 * have it. `ProcessPrng(buf, len)` forwarded to `advapi32.SystemFunction036` (RtlGenRandom, the
 * same two arguments, non-zero on success) is what Wine 9 itself does, so the DLL placed next to
 * the .exe stands in for the missing system file and changes nothing in hermit.
 */

const FILE_ALIGN = 0x200;
const SECTION_RVA = 0x1000;

/** `exports`: name → "dll.Function" it forwards to. */
function forwarderDll(dllName: string, exports: Record<string, string>): Uint8Array {
  const names = Object.keys(exports).sort(); // the loader binary-searches the name table
  const n = names.length;
  // Section layout: export directory, address table, name pointers, ordinals, then strings.
  const dirAt = 0;
  const eatAt = dirAt + 40;
  const namePtrAt = eatAt + 4 * n;
  const ordAt = namePtrAt + 4 * n;
  let strAt = ordAt + 2 * n;
  const strings: { at: number; text: string }[] = [];
  const addString = (text: string) => {
    const at = strAt;
    strings.push({ at, text });
    strAt += text.length + 1;
    return at;
  };
  const dllNameAt = addString(dllName);
  const nameAt = names.map(addString);
  const forwardAt = names.map((name) => addString(exports[name]));
  const exportSize = strAt;
  const rawSize = Math.ceil(exportSize / FILE_ALIGN) * FILE_ALIGN;

  const buf = new Uint8Array(FILE_ALIGN + rawSize);
  const v = new DataView(buf.buffer);
  const u16 = (o: number, x: number) => v.setUint16(o, x, true);
  const u32 = (o: number, x: number) => v.setUint32(o, x, true);

  // DOS header: "MZ", e_lfanew.
  u16(0, 0x5a4d);
  u32(0x3c, 0x40);
  // PE signature and COFF header.
  const pe = 0x40;
  u32(pe, 0x00004550);
  const coff = pe + 4;
  u16(coff, 0x8664); // AMD64
  u16(coff + 2, 1); // one section
  u16(coff + 16, 240); // size of the PE32+ optional header
  u16(coff + 18, 0x2022); // EXECUTABLE_IMAGE | LARGE_ADDRESS_AWARE | DLL
  // Optional header (PE32+).
  const opt = coff + 20;
  u16(opt, 0x20b);
  u32(opt + 8, rawSize); // SizeOfInitializedData
  u32(opt + 16, 0); // AddressOfEntryPoint: none, so there is no DllMain to call
  u32(opt + 20, SECTION_RVA); // BaseOfCode
  v.setBigUint64(opt + 24, 0x180000000n, true); // ImageBase
  u32(opt + 32, 0x1000); // SectionAlignment
  u32(opt + 36, FILE_ALIGN);
  u16(opt + 40, 6); // MajorOperatingSystemVersion
  u16(opt + 48, 6); // MajorSubsystemVersion
  u32(opt + 56, SECTION_RVA + Math.ceil(exportSize / 0x1000) * 0x1000); // SizeOfImage
  u32(opt + 60, FILE_ALIGN); // SizeOfHeaders
  u16(opt + 68, 3); // Subsystem: console
  u16(opt + 70, 0x0140); // DYNAMIC_BASE | NX_COMPAT (nothing to relocate)
  v.setBigUint64(opt + 72, 0x100000n, true); // stack reserve
  v.setBigUint64(opt + 80, 0x1000n, true); // stack commit
  v.setBigUint64(opt + 88, 0x100000n, true); // heap reserve
  v.setBigUint64(opt + 96, 0x1000n, true); // heap commit
  u32(opt + 108, 16); // NumberOfRvaAndSizes
  u32(opt + 112, SECTION_RVA + dirAt); // data directory 0: exports
  u32(opt + 116, exportSize);
  // The one section header.
  const sec = opt + 240;
  buf.set(new TextEncoder().encode(".edata"), sec);
  u32(sec + 8, exportSize); // VirtualSize
  u32(sec + 12, SECTION_RVA);
  u32(sec + 16, rawSize);
  u32(sec + 20, FILE_ALIGN); // PointerToRawData
  u32(sec + 36, 0x40000040); // INITIALIZED_DATA | MEM_READ

  // The export directory and its tables.
  const s = FILE_ALIGN; // file offset of the section
  const rva = (at: number) => SECTION_RVA + at;
  u32(s + dirAt + 12, rva(dllNameAt));
  u32(s + dirAt + 16, 1); // ordinal base
  u32(s + dirAt + 20, n);
  u32(s + dirAt + 24, n);
  u32(s + dirAt + 28, rva(eatAt));
  u32(s + dirAt + 32, rva(namePtrAt));
  u32(s + dirAt + 36, rva(ordAt));
  for (let i = 0; i < n; i++) {
    // An address inside the export directory's range is a forwarder string, not code.
    u32(s + eatAt + 4 * i, rva(forwardAt[i]));
    u32(s + namePtrAt + 4 * i, rva(nameAt[i]));
    u16(s + ordAt + 2 * i, i);
  }
  for (const { at, text } of strings) buf.set(new TextEncoder().encode(text), s + at);
  return buf;
}

/** The stand-in Wine 8 needs for the Bun runtime; see the docblock. */
export function bcryptPrimitivesDll(): Uint8Array {
  return forwarderDll("bcryptprimitives.dll", { ProcessPrng: "advapi32.SystemFunction036" });
}
