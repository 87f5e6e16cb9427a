import sys

from mockserver.entry import main

sys.exit(main())
