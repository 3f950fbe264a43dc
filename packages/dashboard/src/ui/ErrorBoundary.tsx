import { Component, type ReactNode } from "react";

interface State {
  error?: Error;
}

/** A page that fails to render says so, and the rest of the dashboard (header, sign out) stays usable. */
export class ErrorBoundary extends Component<{ children: ReactNode }, State> {
  override state: State = {};

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  override render() {
    if (!this.state.error) return this.props.children;
    return (
      <p role="alert" className="error">
        This page failed: {this.state.error.message}. Reload, or go back to the deployments.
      </p>
    );
  }
}
