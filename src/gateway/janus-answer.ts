/** A message from Janus: requests' answers and asynchronous events share this shape (snake_case, as sent). */
export interface JanusAnswer {
  janus: string;
  transaction?: string;
  session_id?: number;
  sender?: number;
  data?: { id?: number; [key: string]: unknown };
  plugindata?: { plugin: string; data: Record<string, unknown> };
  /** Janus answers an offer; its own offers (e.g. a VideoRoom subscriber) are offers: the WebRTC SDP types. */
  jsep?: { type: 'offer' | 'answer' | 'pranswer' | 'rollback'; sdp: string; [key: string]: unknown };
  error?: { code: number; reason: string };
  [key: string]: unknown;
}

/** One ICE candidate as a browser's RTCIceCandidate.toJSON() gives it. */
export interface IceCandidateInit {
  candidate: string;
  sdpMid?: string | null;
  sdpMLineIndex?: number | null;
  usernameFragment?: string | null;
}

/** What a trickle request carries: one candidate, several, or the end of gathering. */
export type TricklePayload = { candidate: IceCandidateInit } | { candidates: IceCandidateInit[] } | { completed: true };
