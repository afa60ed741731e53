import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { GatehouseError } from '../lib/api';
import { useT } from './app-context';

/** The message of an API error as the API wrote it; a 403 explained (what the caller's roles lack). */
export function ErrorBox({ error, scope }: { error: unknown; scope?: string }) {
  const t = useT();
  if (!error) return null;
  const status = error instanceof GatehouseError ? error.status : undefined;
  const body =
    error instanceof GatehouseError
      ? (error.body as { message?: string; code?: string } | undefined)
      : undefined;
  const message = body?.message ?? (error instanceof Error ? error.message : String(error));
  const details =
    (error instanceof GatehouseError ? (error.body as { details?: unknown[] })?.details : undefined) ?? [];
  if (status === 403) {
    return (
      <div className="alert" role="alert" data-status="403">
        <strong>{t('forbiddenTitle')}</strong>
        <p>{scope ? t('forbidden', { scope }) : t('forbiddenPlain', { message })}</p>
        {scope ? <p className="hint">{message}</p> : null}
      </div>
    );
  }
  return (
    <div className="alert" role="alert" data-status={status ?? ''}>
      <strong>
        {t('error')}
        {status ? ` ${status}` : ''}
      </strong>
      <p>{message}</p>
      {details.length ? (
        <ul>
          {details.map((d, i) => (
            <li key={i}>
              {typeof d === 'string' ? d : ((d as { message?: string }).message ?? JSON.stringify(d))}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function Loading() {
  const t = useT();
  return (
    <p className="loading" role="status">
      {t('loading')}
    </p>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="page-header">
      <h1>{title}</h1>
      <div className="page-actions">{children}</div>
    </div>
  );
}

/** A labelled form field. */
export function Field({
  label,
  children,
  hint,
}: {
  label: string;
  hint?: string;
  children: (id: string) => ReactNode;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id)}
      {hint ? <p className="hint">{hint}</p> : null}
    </div>
  );
}

/**
 * A button whose action asks first, in a modal dialog (native <dialog>: focus kept inside, Escape cancels).
 */
export function ConfirmButton({
  label,
  question,
  onConfirm,
  danger = true,
  className,
  id,
}: {
  label: string;
  question: string;
  onConfirm(): void | Promise<void>;
  danger?: boolean;
  className?: string;
  id?: string;
}) {
  const t = useT();
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  return (
    <>
      <button
        type="button"
        id={id}
        className={className ?? (danger ? 'danger' : 'secondary')}
        onClick={() => ref.current?.showModal()}
      >
        {label}
      </button>
      <dialog ref={ref} aria-labelledby={titleId} className="confirm">
        <h2 id={titleId}>{t('confirmTitle')}</h2>
        <p>{question}</p>
        <div className="dialog-actions">
          <button type="button" className="secondary" onClick={() => ref.current?.close()} autoFocus>
            {t('cancel')}
          </button>
          <button
            type="button"
            className={danger ? 'danger' : ''}
            data-confirm
            onClick={() => {
              ref.current?.close();
              void onConfirm();
            }}
          >
            {t('confirm')}
          </button>
        </div>
      </dialog>
    </>
  );
}

export function CopyButton({ value }: { value: string }) {
  const t = useT();
  const [done, setDone] = useState(false);
  useEffect(() => {
    if (!done) return;
    const h = setTimeout(() => setDone(false), 2000);
    return () => clearTimeout(h);
  }, [done]);
  return (
    <button
      type="button"
      className="secondary small"
      onClick={() => {
        void navigator.clipboard?.writeText(value).then(
          () => setDone(true),
          () => setDone(false),
        );
      }}
    >
      {done ? t('copied') : t('copy')}
    </button>
  );
}

/** A short status line for a done action (announced). */
export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  );
}

export const splitLines = (s: string): string[] =>
  s
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);

export const formatDate = (s: unknown, lang: string): string => {
  if (typeof s !== 'string') return '';
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? s : d.toLocaleString(lang === 'mn' ? 'mn-MN' : 'en-GB');
};
