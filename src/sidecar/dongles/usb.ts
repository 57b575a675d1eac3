import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A USB device that looks like a licence key: its ids match the configured list. */
export interface UsbDongle {
  /** Stable for one port: `usb-<sysfs name>` (e.g. usb-1-1.2). */
  id: string;
  vendorId: string;
  productId: string;
  serial: string | null;
  manufacturer: string | null;
  product: string | null;
  /** Whether one of its interfaces is of the HID class (03), as licence keys usually are. */
  hid: boolean;
  sysfsPath: string;
}

/** Parse `BIMS_DONGLE_USB_IDS`: comma-separated `vendor:product` hex pairs, `*` for any product. */
export function parseUsbIds(text: string): { vendorId: string; productId: string | '*' }[] {
  return text
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)
    .map((pair) => {
      const m = /^([0-9a-f]{4}):([0-9a-f]{4}|\*)$/.exec(pair);
      if (!m) throw new Error(`BIMS_DONGLE_USB_IDS: '${pair}' is not vendor:product in hex (e.g. 0529:0001)`);
      return { vendorId: m[1]!, productId: m[2]! };
    });
}

const attr = async (dir: string, name: string) =>
  (await readFile(join(dir, name), 'utf8').catch(() => null))?.trim() || null;

/**
 * The matching devices under `root` (normally /sys/bus/usb/devices). Reading sysfs needs no native module
 * and no privileges, which `node-hid` would; the sidecar only needs to know a key is there. A missing root
 * (containers, non-Linux) means no devices rather than an error.
 */
export async function listUsbDongles(
  ids: { vendorId: string; productId: string | '*' }[],
  root = '/sys/bus/usb/devices',
): Promise<UsbDongle[]> {
  if (ids.length === 0) return [];
  const entries = await readdir(root).catch(() => [] as string[]);
  const found: UsbDongle[] = [];
  for (const name of entries.sort()) {
    // Interfaces (1-1:1.0) and root hubs (usb1) are not devices of their own here.
    if (name.includes(':') || name.startsWith('usb')) continue;
    const dir = join(root, name);
    const vendorId = (await attr(dir, 'idVendor'))?.toLowerCase();
    const productId = (await attr(dir, 'idProduct'))?.toLowerCase();
    if (!vendorId || !productId) continue;
    if (!ids.some((i) => i.vendorId === vendorId && (i.productId === '*' || i.productId === productId))) continue;
    const interfaces = (await readdir(dir).catch(() => [] as string[])).filter((e) => e.startsWith(`${name}:`));
    let hid = false;
    for (const iface of interfaces) if ((await attr(join(dir, iface), 'bInterfaceClass')) === '03') hid = true;
    found.push({
      id: `usb-${name}`,
      vendorId,
      productId,
      hid,
      sysfsPath: dir,
      serial: await attr(dir, 'serial'),
      manufacturer: await attr(dir, 'manufacturer'),
      product: await attr(dir, 'product'),
    });
  }
  return found;
}
