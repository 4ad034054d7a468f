// The control channel has one source of truth, resources/protocol/control-channel.json
// (issue 28): shared/protocol.ts must say exactly the same thing, and the extension's reader
// must take every event the console sends.
import * as assert from 'assert/strict';
import { readFileSync } from 'fs';
import * as path from 'path';
import { describe, it } from 'node:test';
import * as p from '../../shared/protocol';
import { parseControlEvent } from '../../src/ConsoleProcess';
import { PACKAGE_ROOT } from '../helpers';

type Spec = string | { [field: string]: Spec };
interface ControlJson {
  name: string;
  version: number;
  transport: string;
  limits: Record<string, number>;
  consoleToParent: Record<string, Spec>;
  parentToConsole: Record<string, Record<string, Spec>>;
  kinds: Record<string, string>;
}

const json = JSON.parse(
  readFileSync(path.join(PACKAGE_ROOT, '..', 'resources', 'protocol', 'control-channel.json'), 'utf8'),
) as ControlJson;

// One value of each kind, as the console would write it.
function sample(spec: Spec, withOptional: boolean): unknown {
  if (typeof spec !== 'string') {
    const out: Record<string, unknown> = {};
    for (const [field, kind] of Object.entries(spec)) {
      const value = sample(kind, withOptional);
      if (value !== undefined) out[field] = value;
    }
    return out;
  }
  switch (spec) {
    case 'string':
      return 'text';
    case 'string?':
      return withOptional ? 'text' : undefined;
    case 'uint':
      return 7;
    case 'hex64':
      return 'ab'.repeat(32);
    case 'object':
      return { vm_name: 'demo-vm' };
    case 'phase':
      return 'READ_ONLY';
    case 'refusal':
      return 'OPERATOR_CLOSE';
    case 'receipt':
      return { event_id: 'e-1', result: 'executed', evidence_head: 'cd'.repeat(32) };
    default:
      throw new Error(`unknown kind ${spec}`);
  }
}

describe('shared/protocol.ts is kept in step with control-channel.json', () => {
  it('hasTheSameNameVersionAndLimits', () => {
    assert.equal(p.CONTROL_CHANNEL_NAME, json.name);
    assert.equal(p.CONTROL_CHANNEL_VERSION, json.version);
    assert.deepEqual({ ...p.ControlLimits }, json.limits);
  });

  it('hasTheSameEventsAndFields', () => {
    assert.deepEqual(p.CONTROL_EVENT_SCHEMA, json.consoleToParent);
  });

  it('hasTheSameCommandsAndFields', () => {
    assert.deepEqual(p.CONTROL_COMMAND_SCHEMA, json.parentToConsole);
  });

  it('usesOnlyKindsTheSchemaDefines', () => {
    const used = new Set<string>();
    const collect = (spec: Spec): void => {
      if (typeof spec === 'string') used.add(spec);
      else Object.values(spec).forEach(collect);
    };
    Object.values(json.consoleToParent).forEach(collect);
    Object.values(json.parentToConsole).forEach(collect);
    for (const kind of used) assert.ok(kind in json.kinds, `kind ${kind} is not defined`);
  });

  it('readsEveryEventTheConsoleSends', () => {
    for (const [event, spec] of Object.entries(json.consoleToParent)) {
      for (const withOptional of [true, false]) {
        const fields = sample(spec, withOptional) as Record<string, unknown>;
        const parsed = parseControlEvent({ event, ...fields });
        assert.ok(parsed, `${event} was not read`);
        assert.equal(parsed.event, event);
      }
    }
    const closed = parseControlEvent({ event: 'closed', ...(sample(json.consoleToParent['closed']!, true) as object) });
    assert.ok(closed?.event === 'closed');
    assert.equal(closed.evidence_head, 'text');
    assert.equal(closed.message, 'text');
    const drained = parseControlEvent({ event: 'drained', upto: 40 });
    assert.deepEqual(drained, { event: 'drained', upto: 40 });
    assert.equal(parseControlEvent({ event: 'drained', upto: -1 }), undefined);
  });
});
