import type { CryptoKey } from 'jose';
import type { DongleCounter } from '../../licensing/document.js';
import { SoftwareDongle, type UpdateState } from './software-dongle.js';
import { listUsbDongles, type UsbDongle } from './usb.js';

interface DonglesOptions {
  usbIds: { vendorId: string; productId: string | '*' }[];
  sysfsRoot?: string;
  /** `auto`: offer the software dongle when no hardware key is present; `off`: never. */
  software: 'auto' | 'off';
  dataDir: string;
  /** The vendor's public key that updates must be signed with; null when none is configured. */
  vendorKey: CryptoKey | null;
}

/** How the sidecar reports one dongle to the API. */
type DongleReport =
  | Awaited<ReturnType<SoftwareDongle['describe']>>
  | {
      id: string;
      serial: string | null;
      software: false;
      present: true;
      usb: Omit<UsbDongle, 'id' | 'serial'>;
      licence: null;
      counters: [];
      update: UpdateState;
    };

/**
 * The dongles the sidecar owns: hardware keys found on USB, reported for what sysfs says of them (reading a
 * vendor's key protocol is beyond this build), and the software dongle when none is present.
 */
export class Dongles {
  readonly software: SoftwareDongle;

  constructor(private readonly options: DonglesOptions) {
    this.software = new SoftwareDongle(options.dataDir);
  }

  private async hardware(): Promise<UsbDongle[]> {
    return listUsbDongles(this.options.usbIds, this.options.sysfsRoot);
  }

  /** The software dongle, when it is on offer now. */
  async softwareOnOffer(): Promise<SoftwareDongle | null> {
    if (this.options.software === 'off') return null;
    return (await this.hardware()).length === 0 ? this.software : null;
  }

  async list(): Promise<DongleReport[]> {
    const hardware = await this.hardware();
    const reports: DongleReport[] = hardware.map(({ id, serial, ...usb }) => ({
      id,
      serial,
      software: false,
      present: true,
      usb,
      licence: null,
      counters: [],
      update: { state: 'IDLE' },
    }));
    if (hardware.length === 0 && this.options.software !== 'off') reports.push(await this.software.describe());
    return reports;
  }

  /** A signed dump of dongle `id` (the only one when absent); null when there is no such software dongle. */
  async dump(
    id: string | undefined,
    counters: DongleCounter[],
  ): Promise<{ fileName: string; jws: string } | { error: string; status: 404 | 409 }> {
    const all = await this.list();
    const target = id ? all.find((d) => d.id === id) : all.length === 1 ? all[0] : undefined;
    if (!target)
      return {
        error: id
          ? `no dongle ${id} is attached`
          : all.length
            ? 'several dongles are attached; name one'
            : 'no dongle is attached',
        status: 404,
      };
    if (!target.software)
      return { error: `dongle ${target.id} is a hardware key whose protocol this build cannot read`, status: 409 };
    return this.software.dump(counters);
  }

  async applyUpdate(jws: string): Promise<UpdateState | { error: string; status: 409 }> {
    const dongle = await this.softwareOnOffer();
    if (!dongle)
      return { error: 'no writable dongle: hardware keys are attached or the software dongle is off', status: 409 };
    return dongle.applyUpdate(jws, this.options.vendorKey);
  }

  async updateState(): Promise<UpdateState> {
    const dongle = await this.softwareOnOffer();
    return dongle ? dongle.updateState() : { state: 'IDLE' };
  }
}
