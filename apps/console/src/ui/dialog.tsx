import { useId, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { useT } from './app-context';
import { ErrorBox } from './kit';

/**
 * A button that opens a form in a modal dialog. `onSubmit` gets the form's data; an error keeps the dialog open
 * with the API's message; success closes it (or shows what `onSubmit` returns, e.g. a secret shown once).
 */
export function FormDialog({
  label,
  title,
  submitLabel,
  children,
  onSubmit,
  scope,
  id,
}: {
  label: string;
  title: string;
  submitLabel?: string;
  children: ReactNode;
  onSubmit(data: FormData): Promise<ReactNode | void>;
  scope?: string;
  id?: string;
}) {
  const t = useT();
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<ReactNode>();
  const [generation, setGeneration] = useState(0);
  const open = () => {
    setError(undefined);
    setResult(undefined);
    setGeneration((g) => g + 1);
    ref.current?.showModal();
  };
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const shown = await onSubmit(new FormData(e.currentTarget));
      if (shown) setResult(shown);
      else ref.current?.close();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" id={id} onClick={open}>
        {label}
      </button>
      <dialog ref={ref} aria-labelledby={titleId} className="form-dialog">
        <h2 id={titleId}>{title}</h2>
        {result ? (
          <>
            {result}
            <div className="dialog-actions">
              <button type="button" onClick={() => ref.current?.close()}>
                {t('back')}
              </button>
            </div>
          </>
        ) : (
          <form onSubmit={(e) => void submit(e)} key={generation}>
            {children}
            <ErrorBox error={error} scope={scope} />
            <div className="dialog-actions">
              <button type="button" className="secondary" onClick={() => ref.current?.close()}>
                {t('cancel')}
              </button>
              <button type="submit" disabled={busy}>
                {submitLabel ?? t('create')}
              </button>
            </div>
          </form>
        )}
      </dialog>
    </>
  );
}

/** The text of a form field ('' when absent). */
export const text = (d: FormData, name: string): string => String(d.get(name) ?? '').trim();
