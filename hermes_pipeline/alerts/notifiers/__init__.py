"""The built-in notifiers (``webhook``, ``feishu``, ``email``), one module each."""
