// The panel protocol has one source of truth, resources/protocol/panel-protocol.json;
// shared/protocol.ts must say exactly the same thing.
import * as assert from 'assert/strict';
import { readFileSync } from 'fs';
import * as path from 'path';
import { describe, it } from 'node:test';
import * as p from '../../shared/protocol';
import { PACKAGE_ROOT } from '../helpers';

interface ProtocolJson {
  name: string;
  version: number;
  limits: Record<string, number>;
  panelToConsole: Record<string, Record<string, unknown>>;
  consoleToPanel: Record<string, Record<string, unknown>>;
  phases: string[];
  pointerButtons: Record<string, number>;
  scancodes: string;
  keyboardScancodes: string[];
  binaryFrame: { byteOrder: string; header: string[][]; rect: string[][]; copy: string[][]; features: Record<string, string> };
}

const json = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, '..', 'resources', 'protocol', 'panel-protocol.json'), 'utf8')) as ProtocolJson;

describe('shared/protocol.ts is kept in step with panel-protocol.json', () => {
  it('hasTheSameNameVersionAndLimits', () => {
    assert.equal(p.PANEL_PROTOCOL_NAME, json.name);
    assert.equal(p.PANEL_PROTOCOL_VERSION, json.version);
    assert.deepEqual({ ...p.PanelLimits }, json.limits);
  });

  it('hasTheSamePanelToConsoleMessagesAndFields', () => {
    assert.deepEqual(p.PANEL_TO_CONSOLE_SCHEMA, json.panelToConsole);
  });

  it('hasTheSameConsoleToPanelMessagesAndFields', () => {
    assert.deepEqual(p.CONSOLE_TO_PANEL_SCHEMA, json.consoleToPanel);
  });

  it('hasTheSamePhasesInOrder', () => {
    assert.deepEqual([...p.PHASES], json.phases);
  });

  it('hasTheSamePointerButtonBits', () => {
    assert.deepEqual({ ...p.POINTER_BUTTONS }, json.pointerButtons);
  });

  it('writesExtendedScancodesAsE000OrCode', () => {
    assert.match(json.scancodes, /0xE000 \| code/);
    assert.equal(p.EXTENDED_SCANCODE_PREFIX, 0xe000);
  });

  it('hasTheSameKeyboardTable', () => {
    assert.deepEqual([...p.KEYBOARD_SCANCODES], json.keyboardScancodes.map((hex) => Number.parseInt(hex, 16)));
    for (const hex of json.keyboardScancodes) assert.match(hex, /^0x(E0)?[0-7][0-9A-F]$/);
  });

  it('hasTheSameBinaryFrameLayout', () => {
    assert.equal(json.binaryFrame.byteOrder, 'little-endian');
    assert.deepEqual(p.FRAME_HEADER_LAYOUT.map(([n, t]) => [n, t]), json.binaryFrame.header.map(([n, t]) => [n, t]));
    assert.deepEqual(p.FRAME_RECT_LAYOUT.map(([n, t]) => [n, t]), json.binaryFrame.rect.map(([n, t]) => [n, t]));
    const size = (layout: ReadonlyArray<readonly [string, p.BinaryFieldType]>) => layout.reduce((s, [, t]) => s + p.BINARY_FIELD_BYTES[t], 0);
    assert.equal(size(p.FRAME_HEADER_LAYOUT), p.FRAME_HEADER_BYTES);
    assert.equal(size(p.FRAME_RECT_LAYOUT), p.FRAME_RECT_HEADER_BYTES);
    const magic = json.binaryFrame.header.find(([n]) => n === 'magic')?.[2] ?? '';
    assert.equal(Number.parseInt(/0x[0-9a-fA-F]+/.exec(magic)?.[0] ?? '', 16), p.FRAME_MAGIC);
    assert.equal(Buffer.from('GCF1').readUInt32LE(0), p.FRAME_MAGIC);
    const encoding = json.binaryFrame.rect.find(([n]) => n === 'encoding')?.[2] ?? '';
    assert.match(encoding, new RegExp(`${p.RECT_ENCODINGS.png} = PNG`));
    assert.match(encoding, new RegExp(`${p.RECT_ENCODINGS.jpeg} = JPEG`));
    assert.match(encoding, new RegExp(`${p.RECT_ENCODINGS.copy} = COPY`));
    assert.deepEqual(p.FRAME_COPY_LAYOUT.map(([n, t]) => [n, t]), json.binaryFrame.copy.map(([n, t]) => [n, t]));
    assert.equal(size(p.FRAME_COPY_LAYOUT), p.FRAME_COPY_BYTES);
    assert.deepEqual([...p.PANEL_FEATURES], Object.keys(json.binaryFrame.features));
  });
});
