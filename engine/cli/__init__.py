"""The ``engine`` command: ``main.py`` holds the app and the run verbs; each verb group has its
own module (``audit``, ``campaign``, ``tasks``) that ``main`` mounts."""
