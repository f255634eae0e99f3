"""Source providers: git, tarball, path, debian, bundle. Each yields a :class:`SourceTree`."""
