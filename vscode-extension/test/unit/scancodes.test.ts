import * as assert from 'assert/strict';
import { describe, it } from 'node:test';
import { isExtendedScancode, scancodeForCode, SCANCODES } from '../../media/scancodes';
import { KEYBOARD_SCANCODES } from '../../shared/protocol';

describe('scancode table', () => {
  const cases: Array<[string, number]> = [
    ['Escape', 0x01],
    ['Digit1', 0x02],
    ['Digit0', 0x0b],
    ['Backspace', 0x0e],
    ['Tab', 0x0f],
    ['KeyQ', 0x10],
    ['KeyP', 0x19],
    ['Enter', 0x1c],
    ['ControlLeft', 0x1d],
    ['KeyA', 0x1e],
    ['KeyL', 0x26],
    ['Backquote', 0x29],
    ['ShiftLeft', 0x2a],
    ['Backslash', 0x2b],
    ['KeyZ', 0x2c],
    ['KeyM', 0x32],
    ['Slash', 0x35],
    ['ShiftRight', 0x36],
    ['NumpadMultiply', 0x37],
    ['AltLeft', 0x38],
    ['Space', 0x39],
    ['CapsLock', 0x3a],
    ['F1', 0x3b],
    ['F10', 0x44],
    ['NumLock', 0x45],
    ['ScrollLock', 0x46],
    ['Numpad7', 0x47],
    ['NumpadSubtract', 0x4a],
    ['NumpadAdd', 0x4e],
    ['Numpad0', 0x52],
    ['NumpadDecimal', 0x53],
    ['IntlBackslash', 0x56],
    ['F11', 0x57],
    ['F12', 0x58],
    ['IntlRo', 0x73],
    ['IntlYen', 0x7d],
    ['NumpadEnter', 0xe01c],
    ['ControlRight', 0xe01d],
    ['NumpadDivide', 0xe035],
    ['PrintScreen', 0xe037],
    ['AltRight', 0xe038],
    ['Home', 0xe047],
    ['ArrowUp', 0xe048],
    ['PageUp', 0xe049],
    ['ArrowLeft', 0xe04b],
    ['ArrowRight', 0xe04d],
    ['End', 0xe04f],
    ['ArrowDown', 0xe050],
    ['PageDown', 0xe051],
    ['Insert', 0xe052],
    ['Delete', 0xe053],
    ['MetaLeft', 0xe05b],
    ['MetaRight', 0xe05c],
    ['ContextMenu', 0xe05d],
    ['AudioVolumeMute', 0xe020],
  ];
  for (const [code, expected] of cases) {
    it(`maps ${code} to 0x${expected.toString(16)}`, () => {
      assert.equal(scancodeForCode(code), expected);
    });
  }

  it('coversTheWholeLetterAndDigitRows', () => {
    for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') assert.ok(scancodeForCode(`Key${c}`), `Key${c}`);
    for (let d = 0; d <= 9; d++) assert.ok(scancodeForCode(`Digit${d}`), `Digit${d}`);
    for (let d = 0; d <= 9; d++) assert.ok(scancodeForCode(`Numpad${d}`), `Numpad${d}`);
    for (let f = 1; f <= 24; f++) assert.ok(scancodeForCode(`F${f}`), `F${f}`);
  });

  it('givesEveryPhysicalKeyItsOwnScancode', () => {
    const aliases = new Set(['OSLeft', 'OSRight']);
    const seen = new Map<number, string>();
    for (const [code, sc] of Object.entries(SCANCODES)) {
      if (aliases.has(code)) continue;
      assert.ok(!seen.has(sc), `${code} and ${seen.get(sc)} share 0x${sc.toString(16)}`);
      seen.set(sc, code);
    }
  });

  it('usesOnlyBaseOrE0ExtendedCodes', () => {
    for (const [code, sc] of Object.entries(SCANCODES)) {
      assert.ok((sc > 0 && sc < 0x80) || (isExtendedScancode(sc) && (sc & 0xff) < 0x80), `${code}: 0x${sc.toString(16)}`);
    }
  });

  it('ignoresUnknownCodesAndPrototypeNames', () => {
    assert.equal(scancodeForCode('Unidentified'), undefined);
    assert.equal(scancodeForCode('Pause'), undefined);
    assert.equal(scancodeForCode('constructor'), undefined);
    assert.equal(scancodeForCode('toString'), undefined);
  });
});

describe('scancode table against the protocol keyboard table', () => {
  const table = new Set(KEYBOARD_SCANCODES);

  it('emitsOnlyKeysOnTheProtocolKeyboardTable', () => {
    for (const [code, sc] of Object.entries(SCANCODES)) {
      assert.ok(table.has(sc), `${code}: 0x${sc.toString(16)} is not in KEYBOARD_SCANCODES`);
    }
  });

  it('canProduceEveryKeyOnTheTable', () => {
    // The webview's keyboard is the larger of the two (the Qt viewer's map is checked against
    // the same table by tst_inputgate): the table holds nothing the webview cannot send.
    const emitted = new Set(Object.values(SCANCODES));
    for (const sc of KEYBOARD_SCANCODES) assert.ok(emitted.has(sc), `0x${sc.toString(16)} is not produced by any KeyboardEvent.code`);
  });

  it('neverSendsTheAcpiKeys', () => {
    for (const acpi of [0xe05e, 0xe05f, 0xe063]) {
      assert.ok(!table.has(acpi), `0x${acpi.toString(16)}`);
      assert.ok(!Object.values(SCANCODES).includes(acpi), `0x${acpi.toString(16)}`);
    }
    assert.equal(scancodeForCode('Power'), undefined);
    assert.equal(scancodeForCode('Sleep'), undefined);
    assert.equal(scancodeForCode('WakeUp'), undefined);
  });
});
