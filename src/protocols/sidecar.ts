// The sidecar's HTTP protocol (src/sidecar/): the answers and requests its three clients in the API exchange with
// it (gateway/sidecar-client.ts for Janus, gateway/decoder-client.ts for media decoders, licensing/sidecar-client.ts
// for dongles), and what the sidecar's routes promise (they are checked with `satisfies` against these types).
import type { DongleCounter, DongleUpdateState } from '../licensing/document.js';

/** Where Janus listens and the secrets it demands, as the sidecar reports them. */
export interface JanusEndpoints {
  url: string;
  adminUrl: string;
  apiSecret: string;
  adminSecret: string;
}

/** The sidecar's report on Janus (GET /v1/janus). */
export interface SidecarJanusReport {
  state: string;
  pid: number | null;
  since: string;
  restarts: number;
  lastError: string | null;
  version: string | null;
  janus: JanusEndpoints;
}

/** A decoder the sidecar started: Janus forwards RTP to host:port, its frames are read with the client's `frames`. */
export interface DecoderHandle {
  id: string;
  host: string;
  port: number;
}

/** What the API asks for when it starts a decoder (POST /v1/decoders). */
export interface DecoderSpec {
  codec: 'VP8' | 'H264' | 'OPUS';
  payloadType: number;
  framesPerSecond: number;
  maxSeconds: number;
  /** Whose capture the decoder serves: the sidecar keeps each owner to its share (BIMS_DECODERS_PER_ACCOUNT). */
  owner: string;
}

/** One dongle as the sidecar reports it; `licence` is the compact JWS it holds (the API verifies it itself). */
export interface SidecarDongle {
  id: string;
  serial: string | null;
  software: boolean;
  present: boolean;
  firmwareVersion?: string;
  licence: string | null;
  counters: DongleCounter[];
  countersAt?: string | null;
  lastSequence?: number;
  usb?: { vendorId: string; productId: string; hid: boolean; manufacturer: string | null; product: string | null };
  update: DongleUpdateState;
}
