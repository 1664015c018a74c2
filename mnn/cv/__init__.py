"""mnn.cv: OpenCV-shaped image processing (``import mnn as MNN; cv = MNN.cv``).

Image rule: images are HW, HWC or 1HWC arrays, uint8 or float. A function returns a Var
when its image argument is a Var (built with ``mnn.expr.const(array)``) and a numpy array
when it is a numpy array; ``imread`` and ``imdecode`` return a Var, as MNN's cv does. A
Var works everywhere an array does (``np.asarray(var)``). Results keep the input's dtype
(float in, float out), as cv2 does. Constants and keyword names are OpenCV's.
"""
from . import (calib3d, codecs, color, constants, contours, drawing, filters, geometric,
               histogram, imgproc, misc, morphology, structural, warp)
from .calib3d import *  # noqa: F401,F403 - each module's __all__ is the public surface
from .codecs import *  # noqa: F401,F403
from .color import *  # noqa: F401,F403
from .constants import *  # noqa: F401,F403
from .contours import *  # noqa: F401,F403
from .drawing import *  # noqa: F401,F403
from .filters import *  # noqa: F401,F403
from .geometric import *  # noqa: F401,F403
from .histogram import *  # noqa: F401,F403
from .imgproc import *  # noqa: F401,F403
from .misc import *  # noqa: F401,F403
from .morphology import *  # noqa: F401,F403
from .structural import *  # noqa: F401,F403
from .warp import *  # noqa: F401,F403

__all__ = (list(codecs.__all__) + list(color.__all__) + list(geometric.__all__)
           + list(warp.__all__) + list(imgproc.__all__) + list(filters.__all__)
           + list(morphology.__all__) + list(misc.__all__) + list(histogram.__all__)
           + list(structural.__all__) + list(calib3d.__all__) + list(drawing.__all__)
           + list(contours.__all__)
           + [name for name in dir(constants) if not name.startswith("_")])
