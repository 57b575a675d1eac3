import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listUsbDongles, parseUsbIds } from './usb.js';

/** A fake /sys/bus/usb/devices: a licence key (HID), a keyboard, a hub's interface and a root hub. */
const root = mkdtempSync(join(tmpdir(), 'bims-sysfs-'));
function device(name: string, attrs: Record<string, string>, interfaces: Record<string, string> = {}) {
  mkdirSync(join(root, name), { recursive: true });
  for (const [k, v] of Object.entries(attrs)) writeFileSync(join(root, name, k), `${v}\n`);
  for (const [iface, cls] of Object.entries(interfaces)) {
    mkdirSync(join(root, name, iface), { recursive: true });
    writeFileSync(join(root, name, iface, 'bInterfaceClass'), `${cls}\n`);
  }
}
device(
  '1-1.2',
  { idVendor: '0529', idProduct: '0001', serial: 'K-42', manufacturer: 'SafeNet', product: 'Sentinel HL' },
  { '1-1.2:1.0': '03' },
);
device('1-1.3', { idVendor: '046d', idProduct: 'c31c', product: 'Keyboard' }, { '1-1.3:1.0': '03' });
device('1-1.4', { idVendor: '064f', idProduct: '2af9' }, { '1-1.4:1.0': 'ff' });
device('1-1:1.0', { bInterfaceClass: '09' });
device('usb1', { idVendor: '1d6b', idProduct: '0002' });
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('USB licence keys from sysfs', () => {
  it('lists only devices whose ids are configured, with their HID-ness and strings', async () => {
    const found = await listUsbDongles(parseUsbIds('0529:0001, 064f:*'), root);
    expect(found.map((d) => d.id)).toEqual(['usb-1-1.2', 'usb-1-1.4']);
    expect(found[0]).toMatchObject({
      vendorId: '0529',
      productId: '0001',
      serial: 'K-42',
      manufacturer: 'SafeNet',
      product: 'Sentinel HL',
      hid: true,
    });
    expect(found[1]).toMatchObject({ vendorId: '064f', productId: '2af9', serial: null, hid: false });
  });

  it('finds nothing with no ids configured or no sysfs at all', async () => {
    expect(await listUsbDongles([], root)).toEqual([]);
    expect(await listUsbDongles(parseUsbIds('0529:*'), join(root, 'missing'))).toEqual([]);
  });

  it('refuses malformed ids', () => {
    expect(() => parseUsbIds('0529-0001')).toThrow(/vendor:product/);
    expect(parseUsbIds('')).toEqual([]);
  });
});
