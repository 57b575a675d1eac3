import { BiometricError } from './errors.js';
import { calibrationOf } from './calibration.js';
import type { KernelChoice } from './matcher-dots.js';
import { FaceGallery } from './face-gallery.js';
import { recordOf, type IdentifyOptions, type MatchCandidate, type MatcherThreads } from './matcher-types.js';
import { parseTemplate, type TemplateRecord } from './template.js';

/**
 * The in-memory gallery of the service, partitioned by template version: templates of different model
 * versions are never compared. Keep it in step with the database (add on enrolment, remove on delete).
 */
export class Gallery {
  private readonly parts = new Map<string, FaceGallery>();
  constructor(private readonly options: { dims?: number; kernel?: KernelChoice; threads?: MatcherThreads } = {}) {}

  /**
   * The partition of one template version (created on demand). A template version belongs to one model,
   * so one modality: voice partitions hold 256-d rows scored with the voice calibration.
   */
  partition(templateVersion: string, record?: TemplateRecord): FaceGallery {
    let p = this.parts.get(templateVersion);
    if (!p) {
      const modality = record?.modality ?? 'face';
      const dims = record?.q.length ?? this.options.dims ?? 512;
      p = new FaceGallery(templateVersion, dims, {
        kernel: this.options.kernel,
        threads: this.options.threads,
        calibration: calibrationOf(modality),
      });
      this.parts.set(templateVersion, p);
    }
    return p;
  }

  /** Template versions present. */
  versions(): string[] {
    return [...this.parts.keys()];
  }

  /** Adds template bytes for a subject, into the partition of the template's version. */
  add(subject: string, templateBytes: Uint8Array): void {
    const t = parseTemplate(templateBytes);
    const r = recordOf(t);
    if (!r) throw new BiometricError('INVALID_TEMPLATE', 'template has no record');
    this.partition(t.templateVersion, r).add(subject, r);
  }

  /** Replaces a subject's templates (all of them, across versions) by these template bytes. */
  replace(subject: string, templates: Uint8Array[]): void {
    const parsed = templates.map((b) => parseTemplate(b));
    this.remove(subject);
    for (const t of parsed) {
      const r = recordOf(t);
      if (r) this.partition(t.templateVersion, r).add(subject, r);
    }
  }

  /** Removes a subject from every partition. */
  remove(subject: string): boolean {
    let found = false;
    for (const p of this.parts.values()) found = p.remove(subject) || found;
    return found;
  }

  /** 1:N search of template bytes in the partition of their version. */
  identify(probeBytes: Uint8Array, opts?: IdentifyOptions): MatchCandidate[] {
    const t = parseTemplate(probeBytes);
    const p = this.parts.get(t.templateVersion);
    const r = recordOf(t);
    return p && r ? p.identify(r, opts) : [];
  }

  /** 1:N search of template bytes split across the matcher threads (on this thread when there are none). */
  async identifyAsync(probeBytes: Uint8Array, opts?: IdentifyOptions): Promise<MatchCandidate[]> {
    const t = parseTemplate(probeBytes);
    const p = this.parts.get(t.templateVersion);
    const r = recordOf(t);
    return p && r ? p.identifyAsync(r, opts) : [];
  }

  /** 1:1 of template bytes against a subject in the partition of their version. */
  verify(probeBytes: Uint8Array, subject: string): MatchCandidate | null {
    const t = parseTemplate(probeBytes);
    const p = this.parts.get(t.templateVersion);
    const r = recordOf(t);
    return p && r ? p.verify(r, subject) : null;
  }
}
