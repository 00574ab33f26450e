from trainjobs.cli import main

raise SystemExit(main())
