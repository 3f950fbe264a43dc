import { Time } from "../ui/Time";
import type { Feedback } from "./trace-api";

/** Feedback on a run: its key, score, value and comment (values as JSON text). */
export function FeedbackList({ feedback }: { feedback: Feedback[] }) {
  return (
    <ul className="feedback-list" data-testid="feedback-list">
      {feedback.map((item) => (
        <li key={item.id}>
          <strong>{item.key}</strong>
          {item.score !== null && <span className="feedback-score"> score {item.score}</span>}
          {item.value !== null && item.value !== undefined && (
            <span className="feedback-value">
              {" "}
              value {typeof item.value === "string" ? item.value : JSON.stringify(item.value)}
            </span>
          )}
          {item.comment && <q className="feedback-comment">{item.comment}</q>}
          <span className="feedback-meta">
            {" "}
            · {item.source} · <Time iso={item.created_at} />
          </span>
        </li>
      ))}
    </ul>
  );
}
