"""mnn.data: datasets and batch loading (pymnn's ``MNN.data``)."""
from .dataloader import DataLoader
from .dataset import Dataset

__all__ = ["Dataset", "DataLoader"]
